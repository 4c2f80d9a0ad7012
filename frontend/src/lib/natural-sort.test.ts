import { describe, expect, it } from 'vitest';
import { byName } from './natural-sort';

describe('byName', () => {
  it('sorts case-blind and numbers by value, as a person reads a file list', () => {
    const names = ['Q3 report.xlsx', 'big.csv', 'sales 10.csv', 'Sales 2.csv', 'ándes.csv', 'zeta.json'];
    expect(byName(names.map((name) => ({ name }))).map((f) => f.name)).toEqual([
      'ándes.csv',
      'big.csv',
      'Q3 report.xlsx',
      'Sales 2.csv',
      'sales 10.csv',
      'zeta.json',
    ]);
  });
});
