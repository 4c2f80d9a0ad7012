import { useEffect, useRef, type RefObject } from 'react';
import { sanitizeFigure, type PlotlyFigure } from '@/lib/plotly-figure';
import { useTheme } from '@/lib/theme';

/** Narrower than this (px), a chart goes without Plotly's toolbar. */
const NARROW_CHART = 560;

/** Height (px) of the strip Plotly's toolbar takes at the chart's top, and of a title's line. */
const TOOLBAR_STRIP = 34;
const TITLE_LINE = 22;

type Layout = Record<string, unknown>;

/**
 * A layout whose title sits below the strip where Plotly's toolbar appears (top right, on hover),
 * with the top margin grown to hold both, so the toolbar never covers the title (Plotly centres or
 * left-aligns it at the very top otherwise). Without the toolbar (narrow charts) or a title, as is.
 */
export function titleClearOfToolbar(layout: Layout, toolbar: boolean, width = 0): Layout {
  const raw = layout.title;
  const title = typeof raw === 'string' ? { text: raw } : ((raw as Layout | undefined) ?? {});
  const given = typeof title.text === 'string' ? title.text : '';
  if (!given.trim()) return layout;
  const text = width > 0 ? wrapTitle(given, Math.floor((width - 40) / TITLE_CHAR)) : given;
  const lines = text.split(/<br\s*\/?>/i).length;
  if (!toolbar && text === given) return layout;
  // Plotly anchors a title of several lines by its middle lines: each one past the first lifts
  // its top by about half a line, which the pad gives back.
  const strip = (toolbar ? TOOLBAR_STRIP : 8) + Math.ceil(((lines - 1) * TITLE_LINE * 3) / 4);
  const margin = (layout.margin as Layout | undefined) ?? {};
  const top = Math.max(Number(margin.t ?? 0), strip + lines * TITLE_LINE + 12);
  return {
    ...layout,
    title: { ...title, text, yref: 'container', y: 1, yanchor: 'top', pad: { ...((title.pad as Layout) ?? {}), t: strip } },
    margin: { ...margin, t: top },
  };
}

/** Average width (px) of a title's character: Plotly draws a title on one line, cut at the edge. */
const TITLE_CHAR = 9;

/** A title too long for its chart broken into lines at spaces (Plotly's `<br>`), each within `perLine` characters. */
export function wrapTitle(text: string, perLine: number): string {
  if (perLine < 8 || /<br\s*\/?>/i.test(text) || text.replace(/<[^>]*>/g, '').length <= perLine) return text;
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && (line + ' ' + word).length > perLine) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.join('<br>');
}

/** Minimal React wrapper around plotly.js (loaded lazily: it is large). */
export function PlotlyChart({
  figure,
  className,
  plotRef,
}: {
  figure: PlotlyFigure;
  className?: string;
  /** The element Plotly draws into, for exporting the chart as drawn (`chartImage`). */
  plotRef?: RefObject<HTMLDivElement | null>;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const theme = useTheme();
  useEffect(() => {
    const el = ref.current;
    if (plotRef) plotRef.current = el;
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
      // On a phone Plotly's toolbar lies over the chart's title; the card's caption has the downloads.
      const isNarrow = () => el.clientWidth > 0 && el.clientWidth < NARROW_CHART;
      let narrow = isNarrow();
      const draw = () =>
        Plotly.react(el, safe.data, titleClearOfToolbar(layout, !narrow, el.clientWidth), { responsive: true, displaylogo: false, displayModeBar: narrow ? false : 'hover' });
      void draw();
      observer = new ResizeObserver(() => {
        // A chart hidden meanwhile (its step folded, its run replaced by a replay) has no size to fit.
        if (!el.clientWidth || !el.isConnected) return;
        if (isNarrow() === narrow) return void Promise.resolve(Plotly.Plots.resize(el)).catch(() => undefined);
        narrow = !narrow;
        void draw();
      });
      observer.observe(el);
    });
    return () => {
      cancelled = true;
      observer?.disconnect();
    };
  }, [figure, theme, plotRef]);
  useEffect(() => {
    const el = ref.current;
    return () => {
      if (el) void import('plotly.js-dist-min').then(({ default: Plotly }) => Plotly.purge(el));
    };
  }, []);
  return <div ref={ref} className={className} style={{ width: '100%', minHeight: 360 }} />;
}

/** A `data:` URL as a Blob (the CSP lets the app fetch only its own origin, so it is decoded here). */
export function dataUrlToBlob(url: string): Blob {
  const comma = url.indexOf(',');
  const head = url.slice(5, comma);
  const body = url.slice(comma + 1);
  const mime = head.split(';')[0] || 'application/octet-stream';
  if (head.endsWith(';base64')) {
    const bin = atob(body);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new Blob([bytes], { type: mime });
  }
  return new Blob([decodeURIComponent(body)], { type: mime });
}

/** The chart drawn in `el` as a PNG (twice the pixels, for sharp slides) or SVG, via Plotly.toImage. */
export async function chartImage(el: HTMLElement, format: 'png' | 'svg'): Promise<Blob> {
  const { default: Plotly } = await import('plotly.js-dist-min');
  // Drawn on white with dark text whatever the app's theme: a file is read outside the app.
  const gd = el as HTMLElement & { data?: unknown[]; layout?: Record<string, unknown> };
  const layout = gd.layout ?? {};
  const font = (layout.font as Record<string, unknown> | undefined) ?? {};
  const figure = { data: gd.data ?? [], layout: { ...layout, paper_bgcolor: '#ffffff', font: { ...font, color: '#27272a' } } };
  const url = await Plotly.toImage(figure, { format, width: el.clientWidth || 800, height: el.clientHeight || 450, scale: format === 'png' ? 2 : 1 });
  return dataUrlToBlob(url);
}
