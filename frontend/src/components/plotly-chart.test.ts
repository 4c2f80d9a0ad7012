import { describe, expect, it } from 'vitest';
import { dataUrlToBlob, titleClearOfToolbar, wrapTitle } from './plotly-chart';

describe('dataUrlToBlob', () => {
  it('decodes base64 PNGs and URL-encoded SVGs', async () => {
    const png = dataUrlToBlob('data:image/png;base64,iVBORw0KGgo=');
    expect(png.type).toBe('image/png');
    expect([...new Uint8Array(await png.arrayBuffer())].slice(0, 4)).toEqual([0x89, 0x50, 0x4e, 0x47]);
    const svg = dataUrlToBlob(`data:image/svg+xml,${encodeURIComponent('<svg a="1"></svg>')}`);
    expect(svg.type).toBe('image/svg+xml');
    expect(await svg.text()).toBe('<svg a="1"></svg>');
  });
});

describe('titleClearOfToolbar', () => {
  it("puts a chart's title below the toolbar's strip, with the top margin to hold both", () => {
    const laid = titleClearOfToolbar({ title: { text: 'Revenue by region', x: 0.5 }, margin: { t: 40, l: 50 } }, true);
    expect(laid.title).toEqual({ text: 'Revenue by region', x: 0.5, yref: 'container', y: 1, yanchor: 'top', pad: { t: 34 } });
    expect(laid.margin).toEqual({ t: 68, l: 50 });
    // A title given as text, over two lines: more room.
    const two = titleClearOfToolbar({ title: 'Revenue<br>by region' }, true);
    expect((two.margin as { t: number }).t).toBe(34 + 17 + 2 * 22 + 12);
  });

  it('leaves a chart without a title, or without the toolbar, as it is', () => {
    const plain = { margin: { t: 40 } };
    expect(titleClearOfToolbar(plain, true)).toBe(plain);
    const titled = { title: { text: 'Revenue' } };
    expect(titleClearOfToolbar(titled, false)).toBe(titled);
  });
});

describe('wrapTitle', () => {
  it('breaks a title too long for a narrow chart at spaces, and leaves a short one alone', () => {
    expect(wrapTitle('Revenue by month and region, April to May 2023', 20)).toBe('Revenue by month and<br>region, April to May<br>2023');
    expect(wrapTitle('Revenue', 20)).toBe('Revenue');
    expect(wrapTitle('Already<br>two lines that are long', 10)).toBe('Already<br>two lines that are long');
  });

  it('gives a narrow chart without a toolbar its title on several lines, with room for them', () => {
    const laid = titleClearOfToolbar({ title: { text: 'Revenue by month and region, April to May 2023' } }, false, 350);
    expect((laid.title as { text: string }).text).toBe('Revenue by month and region, April<br>to May 2023');
    expect((laid.margin as { t: number }).t).toBe(8 + 17 + 2 * 22 + 12);
  });
});
