import { describe, expect, it } from 'vitest';
import { formatCost, formatNumber, formatTokens, formatUsage } from './utils';

describe('formatNumber', () => {
  it('groups thousands', () => {
    expect(formatNumber(0)).toBe('0');
    expect(formatNumber(999)).toBe('999');
    expect(formatNumber(3412)).toBe('3,412');
    expect(formatNumber(1_234_567_890)).toBe('1,234,567,890');
  });
});

describe('formatTokens', () => {
  it('says token or tokens', () => {
    expect(formatTokens(1)).toBe('1 token');
    expect(formatTokens(0)).toBe('0 tokens');
    expect(formatTokens(12_000)).toBe('12,000 tokens');
  });
});

describe('formatCost', () => {
  it('shows cents from a cent up, with thousands separators', () => {
    expect(formatCost(12.5)).toBe('$12.50');
    expect(formatCost(0.01)).toBe('$0.01');
    expect(formatCost(0.256)).toBe('$0.26');
    expect(formatCost(1234.5)).toBe('$1,234.50');
    expect(formatCost(0)).toBe('$0.00');
  });

  it('shows two significant digits below a cent', () => {
    expect(formatCost(0.0031)).toBe('$0.0031');
    expect(formatCost(0.003149)).toBe('$0.0031');
    expect(formatCost(0.00001)).toBe('$0.00001');
    expect(formatCost(0.000012345)).toBe('$0.000012');
    expect(formatCost(0.003)).toBe('$0.003');
  });

  it('says so when the cost is unknown', () => {
    expect(formatCost(null)).toBe('—');
    expect(formatCost(undefined)).toBe('—');
  });
});

describe('formatUsage', () => {
  it('sums the tokens and adds the cost when known', () => {
    expect(formatUsage({ tokens_in: 3000, tokens_out: 412, cost_usd: 0.0031 })).toBe('3,412 tokens · $0.0031');
    expect(formatUsage({ tokens_in: 3000, tokens_out: 412, cost_usd: null })).toBe('3,412 tokens');
  });
});
