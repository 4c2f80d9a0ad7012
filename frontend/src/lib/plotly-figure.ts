import { isImageDataUri } from './safe-url';

/**
 * Figure JSON comes from code the model wrote, so it is untrusted: before Plotly draws it, every
 * way it could make the browser fetch a URL by itself is removed. Images stay when they are inline
 * data: URIs; map subplots get a base map with no tiles; a GeoJSON given as a URL is dropped.
 */

export type PlotlyFigure = { data?: unknown[]; layout?: Record<string, unknown>; frames?: unknown[] };

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A MapLibre style with no sources, sprite or glyphs: nothing to download. */
export const BLANK_MAP_STYLE = {
  version: 8,
  sources: {},
  layers: [{ id: 'background', type: 'background', paint: { 'background-color': 'rgba(0,0,0,0)' } }],
};

const MAP_SUBPLOT = /^(map|mapbox)\d*$/;
const MAP_TRACES = new Set(['scattermap', 'choroplethmap', 'densitymap', 'scattermapbox', 'choroplethmapbox', 'densitymapbox']);

function sanitizeImages(images: unknown): unknown {
  if (!Array.isArray(images)) return images;
  return images.filter((img) => isObj(img) && isImageDataUri(img.source));
}

function sanitizeMap(map: unknown): unknown {
  if (!isObj(map)) return map;
  const layers = Array.isArray(map.layers)
    ? map.layers.filter((l) => isObj(l) && (l.sourcetype === undefined || l.sourcetype === 'geojson') && isObj(l.source))
    : map.layers;
  return { ...map, style: BLANK_MAP_STYLE, layers };
}

function sanitizeTrace(trace: unknown): unknown {
  if (!isObj(trace)) return trace;
  const out: Obj = { ...trace };
  // choropleth(map), scattergeo…: a GeoJSON given as a URL is fetched.
  if (typeof out.geojson === 'string') delete out.geojson;
  // The image trace draws its `source` like an <img>.
  if (out.type === 'image' && out.source !== undefined && !isImageDataUri(out.source)) delete out.source;
  return out;
}

function sanitizeTemplate(template: unknown): unknown {
  if (!isObj(template)) return undefined;
  const data = isObj(template.data)
    ? Object.fromEntries(Object.entries(template.data).map(([type, traces]) => [type, Array.isArray(traces) ? traces.map(sanitizeTrace) : traces]))
    : template.data;
  return { ...template, data, layout: isObj(template.layout) ? sanitizeLayout(template.layout) : template.layout };
}

export function sanitizeLayout(layout: Obj): Obj {
  const out: Obj = {};
  for (const [key, value] of Object.entries(layout)) {
    if (key === 'images') out[key] = sanitizeImages(value);
    else if (key === 'template') out[key] = sanitizeTemplate(value);
    else if (MAP_SUBPLOT.test(key)) out[key] = sanitizeMap(value);
    else out[key] = value;
  }
  return out;
}

/** The figure with nothing in it that loads a URL (frames are dropped: charts are not animated here). */
export function sanitizeFigure(figure: PlotlyFigure): { data: unknown[]; layout: Obj } {
  const data = (Array.isArray(figure.data) ? figure.data : []).map(sanitizeTrace);
  const layout = sanitizeLayout(isObj(figure.layout) ? figure.layout : {});
  // A map subplot that the layout does not mention still gets Plotly's default (tiled) style.
  for (const trace of data) {
    if (!isObj(trace) || typeof trace.type !== 'string' || !MAP_TRACES.has(trace.type)) continue;
    const base = trace.type.endsWith('mapbox') ? 'mapbox' : 'map';
    const key = typeof trace.subplot === 'string' && MAP_SUBPLOT.test(trace.subplot) ? trace.subplot : base;
    if (!isObj(layout[key])) layout[key] = sanitizeMap({});
  }
  return { data, layout };
}
