import { describe, expect, it } from 'vitest';
import { BLANK_MAP_STYLE, sanitizeFigure } from './plotly-figure';

const PNG = 'data:image/png;base64,iVBORw0KGgo=';
const EVIL = 'https://evil.example/x.png?d=SECRET';

/** Every string in a value, wherever it is nested. */
const strings = (v: unknown): string[] =>
  typeof v === 'string' ? [v] : v && typeof v === 'object' ? Object.values(v).flatMap(strings) : [];

describe('sanitizeFigure', () => {
  it('keeps layout images only when they are inline data: URIs', () => {
    const { layout } = sanitizeFigure({
      data: [{ type: 'bar', x: [1], y: [2] }],
      layout: { title: { text: 'ok' }, images: [{ source: EVIL }, { source: PNG, x: 0 }, { source: 'javascript:1' }, 'junk'] },
    });
    expect(layout.images).toEqual([{ source: PNG, x: 0 }]);
    expect(layout.title).toEqual({ text: 'ok' });
  });

  it('cleans the template: its images, map styles and trace defaults', () => {
    const { layout } = sanitizeFigure({
      layout: {
        template: {
          layout: { images: [{ source: EVIL }], mapbox: { style: 'https://evil.example/style.json' } },
          data: { choropleth: [{ geojson: 'https://evil.example/geo.json' }], bar: [{ marker: { color: 'red' } }] },
        },
      },
    });
    expect(strings(layout).some((s) => s.includes('evil.example'))).toBe(false);
    expect((layout.template as { data: { bar: unknown[] } }).data.bar).toEqual([{ marker: { color: 'red' } }]);
  });

  it('gives every map subplot a base map without tiles and drops layers that load URLs', () => {
    const inline = { sourcetype: 'geojson', source: { type: 'FeatureCollection', features: [] }, type: 'fill' };
    const { layout } = sanitizeFigure({
      data: [{ type: 'scattermap', lat: [1], lon: [2] }, { type: 'densitymapbox', subplot: 'mapbox2', lat: [1], lon: [2] }, { type: 'heatmap', z: [[1]] }],
      layout: {
        map: {
          style: 'open-street-map',
          layers: [
            { sourcetype: 'raster', source: ['https://evil.example/{z}/{x}/{y}.png'] },
            { sourcetype: 'geojson', source: 'https://evil.example/geo.json' },
            inline,
          ],
        },
      },
    });
    expect(layout.map).toEqual({ style: BLANK_MAP_STYLE, layers: [inline] });
    expect(layout.mapbox2).toEqual({ style: BLANK_MAP_STYLE, layers: undefined });
    expect(layout.heatmap).toBeUndefined();
    expect(strings(BLANK_MAP_STYLE).some((s) => s.includes('://'))).toBe(false);
  });

  it('drops GeoJSON given as a URL and image traces that point elsewhere', () => {
    const geo = { type: 'FeatureCollection', features: [] };
    const { data } = sanitizeFigure({
      data: [
        { type: 'choropleth', geojson: 'https://evil.example/geo.json', locations: ['a'] },
        { type: 'choroplethmap', geojson: geo },
        { type: 'image', source: EVIL },
        { type: 'image', source: PNG },
      ],
    });
    expect(data).toEqual([
      { type: 'choropleth', locations: ['a'] },
      { type: 'choroplethmap', geojson: geo },
      { type: 'image' },
      { type: 'image', source: PNG },
    ]);
  });

  it('tolerates figures without data or layout, and drops frames', () => {
    expect(sanitizeFigure({ frames: [{ layout: { images: [{ source: EVIL }] } }] })).toEqual({ data: [], layout: {} });
  });
});
