import { describe, expect, it } from 'vitest';
import { dataUrlToBlob } from './plotly-chart';

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
