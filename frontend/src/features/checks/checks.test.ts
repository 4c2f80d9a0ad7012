import { describe, expect, it } from 'vitest';
import { accuracyChange, expectedFromAnswer, parseExpected } from './checks';
import type { CheckRun } from './types';

describe('parseExpected', () => {
  it('reads name=value pairs separated by commas or lines', () => {
    expect(parseExpected('revenue=1200, customers = 42\nregion=North')).toEqual({ expected: { revenue: '1200', customers: '42', region: 'North' } });
  });
  it('says what is wrong', () => {
    expect(parseExpected('')).toHaveProperty('problem');
    expect(parseExpected('revenue')).toEqual({ problem: '“revenue” is not a name=value pair.' });
    expect(parseExpected('total revenue=3')).toEqual({ problem: '“total revenue”: a name has only letters, digits and underscores.' });
    expect(parseExpected('a=1, a=2')).toEqual({ problem: '“a” is given twice.' });
  });
});

describe('expectedFromAnswer', () => {
  it('takes the @name[value] pairs an answer ends with', () => {
    expect(expectedFromAnswer('The revenue was 1,200.\n@revenue[1200] @customers[42]')).toBe('revenue=1200, customers=42');
    expect(expectedFromAnswer('No pairs here.')).toBe('');
  });
});

describe('accuracyChange', () => {
  const run = (accuracy: number | null) => ({ accuracy }) as CheckRun;
  it('says the change from the run before in points', () => {
    expect(accuracyChange(run(0.75), run(0.5))).toBe('+25 points');
    expect(accuracyChange(run(0.5), run(0.51))).toBe('−1 point');
    expect(accuracyChange(run(0.5), run(0.5))).toBe('no change');
    expect(accuracyChange(run(0.5), undefined)).toBeNull();
  });
});
