/* Inline SVG figures (pub_svg.h). */
#include "pub_svg.h"

#include <math.h>
#include <string.h>

void kcs_html_text(FILE *f, const char *s)
{
    for (; s && *s; s++)
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
}

int kcs_logscale_fit(kcs_logscale *s, double base, const double *v, int n, double px0, double px1)
{
    double mn = INFINITY, mx = -INFINITY;
    int drawn = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i]) && v[i] > 0) {
            mn = fmin(mn, v[i]);
            mx = fmax(mx, v[i]);
            drawn++;
        }
    s->base = base;
    s->px0 = px0;
    s->px1 = px1;
    if (!drawn) {
        s->lo = 1;
        s->hi = base;
        return 0;
    }
    double lb = log(base);
    /* a small slack so that an exact power stays its own bound despite rounding */
    double elo = floor(log(mn) / lb + 1e-9), ehi = ceil(log(mx) / lb - 1e-9);
    if (ehi <= elo) {
        elo -= 1;
        ehi += 1;
    }
    s->lo = pow(base, elo);
    s->hi = pow(base, ehi);
    return drawn;
}

double kcs_logscale_px(const kcs_logscale *s, double v)
{
    if (!(isfinite(v) && v > 0))
        return NAN;
    double t = (log(v) - log(s->lo)) / (log(s->hi) - log(s->lo));
    return s->px0 + t * (s->px1 - s->px0);
}

int kcs_logscale_ticks(const kcs_logscale *s, double *ticks, int max)
{
    double lb = log(s->base);
    long elo = lround(log(s->lo) / lb), ehi = lround(log(s->hi) / lb);
    long span = ehi - elo, step = 1;
    if (max < 1)
        return 0;
    while (span / step + 1 > max)
        step++;
    int n = 0;
    for (long e = elo; e <= ehi && n < max; e += step)
        ticks[n++] = pow(s->base, (double)e);
    return n;
}

void kcs_logscale_label(const kcs_logscale *s, double tick, char *buf, size_t len)
{
    if (s->base == 2)
        snprintf(buf, len, "2^%ld", lround(log2(tick)));
    else
        snprintf(buf, len, "1e%ld", lround(log10(tick)));
}

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
#define N_PALETTE (int)(sizeof palette / sizeof *palette)

void kcs_svg_plot(FILE *f, const char *title, const char *xlabel, const char *ylabel,
                  const kcs_svg_series *s, int n_series)
{
    const double W = 640, H = 360, L = 70, R = 20, T = 30, B = 50;
    const double legend_h = 16.0 * n_series + 8;
    int total = 0;
    for (int i = 0; i < n_series; i++)
        total += s[i].n;
    double xs[total ? total : 1], ys[total ? total : 1];
    int m = 0;
    for (int i = 0; i < n_series; i++)
        for (int j = 0; j < s[i].n; j++) {
            xs[m] = s[i].x[j];
            ys[m++] = s[i].y[j];
        }
    kcs_logscale sx, sy;
    kcs_logscale_fit(&sx, 2, xs, m, L, W - R);
    int drawn = kcs_logscale_fit(&sy, 10, ys, m, H - B, T);
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n<title>",
            W, H + legend_h, W, H + legend_h);
    kcs_html_text(f, title);
    fprintf(f, "</title>\n<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" "
               "fill=\"none\" stroke=\"#444\"/>\n",
            L, T, W - L - R, H - T - B);
    double ticks[24];
    char lab[32];
    int nt = kcs_logscale_ticks(&sx, ticks, 12);
    for (int i = 0; i < nt; i++) {
        double px = kcs_logscale_px(&sx, ticks[i]);
        kcs_logscale_label(&sx, ticks[i], lab, sizeof lab);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#ddd\"/>"
                   "<text x=\"%.1f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\">%s</text>\n",
                px, T, px, H - B, px, H - B + 16, lab);
    }
    nt = kcs_logscale_ticks(&sy, ticks, 10);
    for (int i = 0; i < nt; i++) {
        double py = kcs_logscale_px(&sy, ticks[i]);
        kcs_logscale_label(&sy, ticks[i], lab, sizeof lab);
        fprintf(f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                   "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>\n",
                L, py, W - R, py, L - 4, py + 4, lab);
    }
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\" text-anchor=\"middle\">", (L + W - R) / 2,
            H - 12);
    kcs_html_text(f, xlabel);
    fprintf(f, "</text>\n<text x=\"14\" y=\"%.0f\" font-size=\"12\" text-anchor=\"middle\" "
               "transform=\"rotate(-90 14 %.0f)\">",
            (T + H - B) / 2, (T + H - B) / 2);
    kcs_html_text(f, ylabel);
    fprintf(f, "</text>\n<text x=\"%.0f\" y=\"18\" font-size=\"13\" text-anchor=\"middle\">",
            W / 2);
    kcs_html_text(f, title);
    fputs("</text>\n", f);
    for (int i = 0; i < n_series; i++) {
        const char *col = palette[i % N_PALETTE];
        /* the line joins the drawable points in order of x */
        int first = 1;
        for (int j = 0; j < s[i].n; j++) {
            double px = kcs_logscale_px(&sx, s[i].x[j]), py = kcs_logscale_px(&sy, s[i].y[j]);
            if (isnan(px) || isnan(py))
                continue;
            if (first)
                fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" points=\"", col);
            else
                fputc(' ', f);
            first = 0;
            fprintf(f, "%.1f,%.1f", px, py);
        }
        if (!first)
            fputs("\"/>\n", f);
        for (int j = 0; j < s[i].n; j++) {
            double px = kcs_logscale_px(&sx, s[i].x[j]), py = kcs_logscale_px(&sy, s[i].y[j]);
            if (isnan(px) || isnan(py))
                continue;
            if (s[i].href && s[i].href[j]) {
                fputs("<a href=\"", f);
                kcs_html_text(f, s[i].href[j]);
                fputs("\">", f);
            }
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>", px, py, col);
            kcs_html_text(f, s[i].name);
            fprintf(f, ": k = %.17g, %.6g</title></circle>", s[i].x[j], s[i].y[j]);
            fputs(s[i].href && s[i].href[j] ? "</a>\n" : "\n", f);
        }
        double ly = H + 12 + 16.0 * i;
        fprintf(f, "<circle cx=\"%.0f\" cy=\"%.0f\" r=\"4\" fill=\"%s\"/><text x=\"%.0f\" "
                   "y=\"%.0f\" font-size=\"11\">",
                L + 6, ly - 4, col, L + 16, ly);
        kcs_html_text(f, s[i].name);
        fputs("</text>\n", f);
    }
    if (drawn < m)
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"end\">%d of %d "
                   "points not drawn (zero or undefined on a log axis)</text>\n",
                W - R, T - 4, m - drawn, m);
    fputs("</svg>\n", f);
}
