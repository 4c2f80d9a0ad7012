declare module 'plotly.js-dist-min' {
  const Plotly: {
    newPlot: (el: HTMLElement, data: unknown[], layout?: Record<string, unknown>, config?: Record<string, unknown>) => Promise<unknown>;
    react: (el: HTMLElement, data: unknown[], layout?: Record<string, unknown>, config?: Record<string, unknown>) => Promise<unknown>;
    purge: (el: HTMLElement) => void;
    toImage: (
      figure: HTMLElement | { data: unknown[]; layout: Record<string, unknown> },
      opts: { format: 'png' | 'svg'; width?: number; height?: number; scale?: number }) => Promise<string>;
    Plots: { resize: (el: HTMLElement) => void };
  };
  export default Plotly;
}
