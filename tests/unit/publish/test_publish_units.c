/* kcs publish's helpers: log axes and the SVG plot, CSV escaping and
 * reading, the sha256 wrapper (NIST vectors), the datapackage writer. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pub_csv.h"
#include "pub_hash.h"
#include "pub_svg.h"
#include "pub_tables.h"
#include "publish.h"
#include "unit_helpers.h"

static void test_logscale(void)
{
    kcs_logscale s;
    double v[] = {3.0, 0.0, NAN, 1000.0, -5.0};
    CU_ASSERT_EQUAL(kcs_logscale_fit(&s, 10, v, 5, 100, 500), 2);
    CU_ASSERT_DOUBLE_EQUAL(s.lo, 1.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(s.hi, 1e3, 1e-9); /* 1000 is a power: its own bound */
    CU_ASSERT_DOUBLE_EQUAL(kcs_logscale_px(&s, 1.0), 100, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(kcs_logscale_px(&s, 1e3), 500, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(kcs_logscale_px(&s, 100.0), 100 + 400 * 2.0 / 3.0, 1e-9);
    CU_ASSERT_TRUE(isnan(kcs_logscale_px(&s, 0.0)));
    CU_ASSERT_TRUE(isnan(kcs_logscale_px(&s, NAN)));
    double t[16];
    CU_ASSERT_EQUAL(kcs_logscale_ticks(&s, t, 16), 4);
    CU_ASSERT_DOUBLE_EQUAL(t[0], 1.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(t[3], 1e3, 1e-9);
    /* exact powers of two are their own bounds; a y axis runs downwards */
    double k[] = {16, 1024, 65536};
    kcs_logscale x;
    kcs_logscale_fit(&x, 2, k, 3, 350, 30);
    CU_ASSERT_DOUBLE_EQUAL(x.lo, 16, 0);
    CU_ASSERT_DOUBLE_EQUAL(x.hi, 65536, 0);
    CU_ASSERT_DOUBLE_EQUAL(kcs_logscale_px(&x, 1024), 350 - 320 * 6.0 / 12.0, 1e-9);
    /* at most max ticks: every step-th power (13 powers, max 5 -> every 3rd) */
    int n = kcs_logscale_ticks(&x, t, 5);
    CU_ASSERT_TRUE(n >= 2 && n <= 5);
    CU_ASSERT_DOUBLE_EQUAL(t[1] / t[0], 8.0, 0);
    char lab[16];
    kcs_logscale_label(&x, 1024, lab, sizeof lab);
    CU_ASSERT_STRING_EQUAL(lab, "2^10");
    kcs_logscale_label(&s, 1e-7, lab, sizeof lab);
    CU_ASSERT_STRING_EQUAL(lab, "1e-7");
    /* a single value: one decade either side; none: [1, base] */
    double one = 8;
    kcs_logscale_fit(&x, 2, &one, 1, 0, 1);
    CU_ASSERT_DOUBLE_EQUAL(x.lo, 4, 0);
    CU_ASSERT_DOUBLE_EQUAL(x.hi, 16, 0);
    CU_ASSERT_EQUAL(kcs_logscale_fit(&x, 10, v + 1, 2, 0, 1), 0);
    CU_ASSERT_DOUBLE_EQUAL(x.hi, 10, 0);
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void test_svg_plot(void)
{
    double x[] = {16, 64, 256}, y[] = {1e-7, 0.0, 3e-6};
    const char *href[] = {"rows/m.html#r-0", "rows/m.html#r-1", "rows/m.html#r-2"};
    kcs_svg_series s[] = {{"dev <a> & \"b\"", 3, x, y, href}};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    kcs_svg_plot(f, "t<1>", "k", "div", s, 1);
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    /* two drawable points (the zero cannot be on a log axis), each linked */
    CU_ASSERT_EQUAL(count(buf, "<a href=\"rows/m.html#r-"), 2);
    CU_ASSERT_PTR_NULL(strstr(buf, "#r-1\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "1 of 3 points not drawn"));
    /* text escaped: no raw < > & " from the names */
    CU_ASSERT_PTR_NULL(strstr(buf, "<a>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "dev &lt;a&gt; &amp; &quot;b&quot;"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "t&lt;1&gt;"));
    CU_ASSERT_EQUAL(count(buf, "<svg"), 1);
    CU_ASSERT_EQUAL(count(buf, "</svg>"), 1);
    free(buf);
}

static void test_csv(void)
{
    char b[64];
    kcs_csv_escape("plain", b, sizeof b);
    CU_ASSERT_STRING_EQUAL(b, "plain");
    kcs_csv_escape("a,b", b, sizeof b);
    CU_ASSERT_STRING_EQUAL(b, "\"a,b\"");
    kcs_csv_escape("say \"hi\"", b, sizeof b);
    CU_ASSERT_STRING_EQUAL(b, "\"say \"\"hi\"\"\"");
    kcs_csv_escape(" lead", b, sizeof b);
    CU_ASSERT_STRING_EQUAL(b, "\" lead\"");
    kcs_csv_escape("two\nlines", b, sizeof b);
    CU_ASSERT_STRING_EQUAL(b, "\"two\nlines\"");
    kcs_csv_escape("a,b", b, 3); /* truncated, terminated */
    CU_ASSERT_EQUAL(strlen(b), 2);
    /* round trip through the writer and the reader */
    const char *cells[] = {"x", "a,b", "q\"q", "l1\nl2", "", " sp"};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    fputs("c0,c1,c2,c3,c4,c5\r\n", f);
    for (int i = 0; i < 6; i++) {
        if (i)
            fputc(',', f);
        kcs_csv_cell(f, cells[i]);
    }
    fputs("\r\n1,2\n", f);
    fclose(f);
    kcs_csv c;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_csv_parse("t.csv", text, len, &c, &err), 0);
    CU_ASSERT_EQUAL(c.n_cols, 6);
    CU_ASSERT_EQUAL_FATAL(c.n_rows, 2);
    CU_ASSERT_STRING_EQUAL(c.header[5], "c5");
    for (int i = 0; i < 6; i++)
        CU_ASSERT_STRING_EQUAL(c.rows[0][i], cells[i]);
    CU_ASSERT_EQUAL(c.line[0], 2);
    CU_ASSERT_EQUAL(c.line[1], 4); /* the quoted newline took a line */
    CU_ASSERT_STRING_EQUAL(c.rows[1][1], "2");
    CU_ASSERT_STRING_EQUAL(c.rows[1][5], ""); /* a short row */
    CU_ASSERT_EQUAL(kcs_csv_col(&c, "c3"), 3);
    CU_ASSERT_EQUAL(kcs_csv_col(&c, "nope"), -1);
    kcs_csv_free(&c);
    free(text);
    /* malformed: named with the line */
    const char *bad = "a,b\n1,\"open\n2,3\n";
    CU_ASSERT_EQUAL(kcs_csv_parse("bad.csv", bad, strlen(bad), &c, &err), KCS_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "bad.csv:2: unterminated"));
    const char *wide = "a,b\n1,2\n1,2,3\n";
    CU_ASSERT_EQUAL(kcs_csv_parse("w.csv", wide, strlen(wide), &c, &err), KCS_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "w.csv:3: 3 cells, the header has 2"));
}

static void test_sha256(void)
{
    char hex[65];
    kcs_error err = {0};
    /* FIPS 180-2 test vectors */
    CU_ASSERT_EQUAL(kcs_sha256_buf("", 0, hex, &err), 0);
    CU_ASSERT_STRING_EQUAL(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CU_ASSERT_EQUAL(kcs_sha256_buf("abc", 3, hex, &err), 0);
    CU_ASSERT_STRING_EQUAL(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    CU_ASSERT_EQUAL(kcs_sha256_buf(m, strlen(m), hex, &err), 0);
    CU_ASSERT_STRING_EQUAL(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* a file of a million 'a' (more than one read buffer) */
    char dir[256], path[512];
    ut_tmpdir(dir, sizeof dir, "sha");
    snprintf(path, sizeof path, "%s/a.bin", dir);
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (int i = 0; i < 1000000; i++)
        fputc('a', f);
    fclose(f);
    int64_t bytes = 0;
    CU_ASSERT_EQUAL(kcs_sha256_file(path, hex, &bytes, &err), 0);
    CU_ASSERT_STRING_EQUAL(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    CU_ASSERT_EQUAL(bytes, 1000000);
    snprintf(path, sizeof path, "%s/missing", dir);
    CU_ASSERT_EQUAL(kcs_sha256_file(path, hex, &bytes, &err), KCS_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "missing: cannot read"));
    ut_rmdir(dir);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = calloc(1, 1 << 20);
    size_t n = fread(s, 1, (1 << 20) - 1, f);
    s[n] = '\0';
    fclose(f);
    return s;
}

static void test_datapackage(void)
{
    char dir[256], p[512];
    ut_tmpdir(dir, sizeof dir, "pkg");
    snprintf(p, sizeof p, "%s/tables", dir);
    CU_ASSERT_EQUAL_FATAL(mkdir(p, 0777), 0);
    snprintf(p, sizeof p, "%s/tables/sources.csv", dir);
    FILE *f = fopen(p, "w");
    int first, n = kcs_pub_table_cols("sources", &first), nc;
    const kcs_pub_col *c = kcs_pub_cols(&nc);
    CU_ASSERT_TRUE_FATAL(n > 3);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%s", i ? "," : "", c[first + i].name);
    fputs("\n", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/abc.txt", dir);
    f = fopen(p, "w");
    fputs("abc", f);
    fclose(f);
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_pub_package(dir, &err), 0);
    snprintf(p, sizeof p, "%s/datapackage.json", dir);
    char *dp = slurp(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dp);
    CU_ASSERT_PTR_NOT_NULL(strstr(dp, "\"profile\": \"data-package\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(dp, "\"name\": \"CC-BY-4.0\""));
    /* abc.txt: its NIST hash and size */
    char *r = strstr(dp, "\"path\": \"abc.txt\"");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_PTR_NOT_NULL(strstr(r, "\"bytes\": 3, \"hash\": \"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(dp, "\"name\": \"abc.txt\", \"path\": \"abc.txt\", \"format\": \"txt\", \"mediatype\": \"text/plain\""));
    /* the CSV: its schema's fields are the table's columns, in order, typed */
    r = strstr(dp, "\"path\": \"tables/sources.csv\"");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    char *prev = r;
    for (int i = 0; i < n; i++) {
        char want[256];
        snprintf(want, sizeof want, "{\"name\": \"%s\", \"type\": \"%s\"", c[first + i].name,
                 c[first + i].type);
        char *at = strstr(prev, want);
        CU_ASSERT_PTR_NOT_NULL(at);
        if (at)
            prev = at;
    }
    /* every file listed once, but not datapackage.json itself */
    CU_ASSERT_PTR_NOT_NULL(strstr(dp, "\"path\": \"CITATION.cff\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(dp, "\"path\": \"LICENSE-data.txt\""));
    CU_ASSERT_PTR_NULL(strstr(dp, "\"path\": \"datapackage.json\""));
    CU_ASSERT_EQUAL(count(dp, "\"hash\": \"sha256:"), 4);
    free(dp);
    snprintf(p, sizeof p, "%s/CITATION.cff", dir);
    char *cff = slurp(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cff);
    CU_ASSERT_PTR_NOT_NULL(strstr(cff, "cff-version: 1.2.0\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(cff, "license: CC-BY-4.0\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(cff, "  - name: \"kcs contributors\"\n"));
    free(cff);
    ut_rmdir(dir);
}

static const ut_test tests[] = {
    {"log axes", test_logscale},
    {"svg plot: links, escaping, undrawable points", test_svg_plot},
    {"csv escaping and reading", test_csv},
    {"sha256 (FIPS 180-2 vectors)", test_sha256},
    {"datapackage.json and CITATION.cff", test_datapackage},
};

UT_MAIN("publish_units", tests)
