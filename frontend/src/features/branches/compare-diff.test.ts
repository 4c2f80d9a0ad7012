import { describe, expect, it } from 'vitest';
import { alignHistories, diffNumbers, diffRows, numbersIn, pairTables } from './compare-diff';

describe('numbersIn', () => {
  it('reads numbers with separators, decimals, signs and percentages, not digits inside words', () => {
    const found = numbersIn('Revenue was 1,234.5 in Q2, down -3 (12%) from v2 and 0.25 of 2026.');
    expect(found.map((n) => n.value)).toEqual([1234.5, -3, 12, 0.25, 2026]);
    expect(found[0].raw).toBe('1,234.5');
  });
});

describe('diffNumbers', () => {
  it('marks the number that changed against the same position on the other side', () => {
    const segs = diffNumbers('Total: 120 from 3 regions.', 'Total: 95 from 3 regions.');
    expect(segs.filter((s) => s.number)).toEqual([
      { text: '120', number: true, changed: true },
      { text: '3', number: true, changed: false },
    ]);
    expect(segs.map((s) => s.text).join('')).toBe('Total: 120 from 3 regions.');
  });

  it('treats 1,000 and 1000 as the same number, and a number the other side lacks as changed', () => {
    expect(diffNumbers('1,000 rows', '1000 rows').some((s) => s.changed)).toBe(false);
    expect(diffNumbers('5 and 7', '5').filter((s) => s.changed).map((s) => s.text)).toEqual(['7']);
  });

  it('leaves a text without numbers whole', () => {
    expect(diffNumbers('No numbers here.', 'Nor here 4.')).toEqual([{ text: 'No numbers here.', number: false, changed: false }]);
  });
});

describe('diffRows', () => {
  const table = (rows: unknown[][], columns = ['region', 'revenue']) => ({ columns, rows });

  it('finds rows added and removed by content, whatever their order', () => {
    const mine = table([
      ['South', 980],
      ['North', 1200],
      ['East', 300],
    ]);
    const theirs = table([
      ['North', 1200],
      ['West', 50],
      ['South', 980],
    ]);
    const d = diffRows(mine, theirs);
    expect(d.added).toEqual([2]);
    expect(d.removed).toEqual([['West', 50]]);
  });

  it('counts duplicate rows, and compares over the shared columns in their own order', () => {
    const mine = table([
      ['North', 1],
      ['North', 1],
    ]);
    const theirs = { columns: [{ name: 'revenue' }, { name: 'region' }], rows: [[1, 'North']] };
    expect(diffRows(mine, theirs)).toEqual({ added: [1], removed: [] });
  });

  it('reports nothing for equal tables', () => {
    const t = table([['a', 1]]);
    expect(diffRows(t, table([['a', 1]]))).toEqual({ added: [], removed: [] });
  });
});

describe('pairTables', () => {
  it('pairs by name first, then by position among unnamed matches', () => {
    const mine = [{ name: 'by_region' }, { name: 'top' }];
    const theirs = [{ name: 'other' }, { name: 'by_region' }];
    expect(pairTables(mine, theirs)).toEqual([{ name: 'by_region' }, null]);
    expect(pairTables([{ name: 'a' }], [{ name: 'b' }])).toEqual([{ name: 'b' }]);
  });
});

describe('alignHistories', () => {
  it('collapses the shared past and pairs the rest by position', () => {
    const r = (id: string) => ({ id });
    const { common, pairs } = alignHistories([r('1'), r('2'), r('3')], [r('1'), r('x'), r('y'), r('z')]);
    expect(common.map((c) => c.id)).toEqual(['1']);
    expect(pairs.map(([a, b]) => [a?.id ?? null, b?.id ?? null])).toEqual([
      ['2', 'x'],
      ['3', 'y'],
      [null, 'z'],
    ]);
  });
});
