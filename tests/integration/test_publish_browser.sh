#!/usr/bin/env bash
# The atlas in a real browser: every page of a kcs publish bundle (a study
# plus the imported H200 run) opened from file:// in headless Chromium
# (Debian's chromium, scripts/setup-deps) through the DevTools protocol
# (tests/integration/atlas_browser.py); any console error or warning,
# exception, failed load, unloaded image, network request or dead internal
# link fails. index.html's screenshot is kept as $KCS_BUILD/artifacts/atlas-index.png.
# The checker is shown to fail on a page with each of those faults.
# Without chromium this test fails (it is not skipped): run scripts/setup-deps.
source "$(dirname "$0")/lib.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || fail "chromium is not installed (Debian package chromium: scripts/setup-deps)"
mpirun4 "$KCS" run "$KCS_SRC/tests/studies/small.yaml" -o "$T/site1.h5" -q
"$KCS" publish "$T/site1.h5" --silicon "$KCS_SRC/docs/silicon/nvidia-h200/run1" -q -o "$T/b"
art="${KCS_BUILD:-$T}/artifacts"
mkdir -p "$art"
rm -f "$art/atlas-index.png"
"$PYTHON" "$KCS_SRC/tests/integration/atlas_browser.py" "$CHROMIUM" "$T/b" "$art/atlas-index.png" ||
  fail "the atlas has problems in the browser"
"$PYTHON" -c "import sys; d=open(sys.argv[1],'rb').read(); assert d[:8]==b'\x89PNG\r\n\x1a\n' and len(d)>5000" \
  "$art/atlas-index.png" || fail "no screenshot"

# the checker fails on each fault
cp -r "$T/b" "$T/bad"
cat > "$T/bad/broken.html" <<'HTML'
<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>x</title></head><body>
<img src="missing.png" alt="">
<script>console.error("deliberate console error")</script>
<a href="nowhere.html">dead file</a> <a href="index.html#no-such-id">dead anchor</a>
</body></html>
HTML
expect_rc 1 "$T/bad.txt" "$PYTHON" "$KCS_SRC/tests/integration/atlas_browser.py" "$CHROMIUM" \
  "$T/bad" "$T/bad.png" broken.html index.html
for what in "console error: deliberate console error" "image did not load" \
            "dead link file://.*/nowhere.html" "dead link file://.*index.html#no-such-id (no such id)" \
            "a load failed"; do
  grep -q "broken.html: $what" "$T/bad.txt" || fail "checker missed: $what ($(cat "$T/bad.txt"))"
done
echo "test_publish_browser: ok ($art/atlas-index.png)"
