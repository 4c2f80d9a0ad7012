import { useEffect, useRef } from 'react';
import { sanitizeFigure, type PlotlyFigure } from '@/lib/plotly-figure';
import { useTheme } from '@/lib/theme';

/** Minimal React wrapper around plotly.js (loaded lazily: it is large). */
export function PlotlyChart({ figure, className }: { figure: PlotlyFigure; className?: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const [theme] = useTheme();
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    let cancelled = false;
    let observer: ResizeObserver | null = null;
    void import('plotly.js-dist-min').then(({ default: Plotly }) => {
      if (cancelled) return;
      const fg = theme === 'dark' ? '#d4d4d8' : '#27272a';
      const safe = sanitizeFigure(figure);
      const layout = {
        ...safe.layout,
        autosize: true,
        paper_bgcolor: 'rgba(0,0,0,0)',
        plot_bgcolor: theme === 'dark' ? 'rgba(255,255,255,0.02)' : (safe.layout.plot_bgcolor ?? undefined),
        font: { ...((safe.layout.font as object) ?? {}), color: fg },
        template: theme === 'dark' ? undefined : safe.layout.template,
        margin: { l: 50, r: 20, t: 40, b: 50, ...((safe.layout.margin as object) ?? {}) },
      };
      void Plotly.react(el, safe.data, layout, { responsive: true, displaylogo: false });
      observer = new ResizeObserver(() => Plotly.Plots.resize(el));
      observer.observe(el);
    });
    return () => {
      cancelled = true;
      observer?.disconnect();
    };
  }, [figure, theme]);
  useEffect(() => {
    const el = ref.current;
    return () => {
      if (el) void import('plotly.js-dist-min').then(({ default: Plotly }) => Plotly.purge(el));
    };
  }, []);
  return <div ref={ref} className={className} style={{ width: '100%', minHeight: 360 }} />;
}
