/* Inline SVG figures for the atlas (kcs publish): log-scaled axes and a
 * scatter-and-line plot whose every point links to the rows it came from. */
#ifndef KCS_PUB_SVG_H
#define KCS_PUB_SVG_H

#include <stdio.h>

/* A logarithmic axis: values [lo, hi] (whole powers of base) drawn on
 * pixels [px0, px1] (px1 < px0 for a y axis). */
typedef struct kcs_logscale {
    double base;
    double lo, hi;
    double px0, px1;
} kcs_logscale;

/* Fit an axis to the positive finite values among v[0..n): lo and hi the
 * powers of base just at or beyond the smallest and largest (one decade
 * around a single value). Returns the count of values drawn (positive and
 * finite); with none, the axis is [1, base]. */
int kcs_logscale_fit(kcs_logscale *s, double base, const double *v, int n, double px0, double px1);
/* The pixel of v (NaN when v is not positive and finite). */
double kcs_logscale_px(const kcs_logscale *s, double v);
/* The ticks (whole powers of base from lo to hi, at most max of them, every
 * step-th power when there are more): their count. */
int kcs_logscale_ticks(const kcs_logscale *s, double *ticks, int max);
/* "2^10" / "1e-07" style label of a tick. */
void kcs_logscale_label(const kcs_logscale *s, double tick, char *buf, size_t len);

typedef struct kcs_svg_series {
    const char *name;
    int n;
    const double *x, *y;
    const char *const *href; /* per point, or NULL */
} kcs_svg_series;

/* One figure: title, axis labels, series on log-log axes (x base 2, y
 * base 10), a legend; points that cannot be drawn (zero, NaN) are counted
 * in a note under the plot. All text is escaped. */
void kcs_svg_plot(FILE *f, const char *title, const char *xlabel, const char *ylabel,
                  const kcs_svg_series *s, int n_series);

/* HTML/XML text escaping (&, <, >, ", '). */
void kcs_html_text(FILE *f, const char *s);

#endif
