import { describe, expect, it } from 'vitest';
import { answerResults, artifactTitle, groupArtifacts } from './artifacts';
import type { StreamArtifact } from './events';

const art = (id: string, kind: string, name: string, step = 1): StreamArtifact => ({
  id,
  kind: kind as StreamArtifact['kind'],
  name,
  mime: 'x',
  size: 1,
  url: `/api/v1/artifacts/${id}/content`,
  step,
});

describe('artifacts as results', () => {
  it('titles charts, images and tables without their extension', () => {
    expect(artifactTitle(art('a', 'plotly', 'Revenue by region.json'))).toBe('Revenue by region');
    expect(artifactTitle(art('b', 'image', 'Trend.png'))).toBe('Trend');
    expect(artifactTitle(art('c', 'table', 'table-1.json'))).toBe('table-1');
    expect(artifactTitle(art('d', 'file', 'out.json'))).toBe('out.json');
  });

  it("folds a table's CSV into the table's card, from the same step only", () => {
    const items = groupArtifacts([
      art('t', 'table', 'table-1.json', 2),
      art('c', 'file', 'table-1.csv', 2),
      art('o', 'file', 'table-1.csv', 3),
      art('p', 'plotly', 'Units.json', 3),
    ]);
    expect(items.map((i) => [i.artifact.id, i.csv?.id ?? null])).toEqual([
      ['t', 'c'],
      ['o', null],
      ['p', null],
    ]);
  });

  it('puts charts first under the answer, then tables, then files, each kind in the order made', () => {
    const items = groupArtifacts([
      art('t', 'table', 'table-1.json', 1),
      art('c', 'file', 'table-1.csv', 1),
      art('f', 'file', 'by_region.csv', 2),
      art('p1', 'plotly', 'Revenue.json', 2),
      art('i', 'image', 'Trend.png', 3),
      art('p2', 'plotly', 'Units.json', 3),
    ]);
    expect(answerResults(items).map((i) => i.artifact.id)).toEqual(['p1', 'p2', 'i', 't', 'f']);
  });
});
