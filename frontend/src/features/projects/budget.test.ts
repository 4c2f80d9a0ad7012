import { describe, expect, it } from 'vitest';
import type { ProjectOut } from '@/client';
import { budgetProgress, parseBudget } from './budget';

const project = (over: Partial<ProjectOut>): ProjectOut => ({
  id: 'p',
  role: 'owner',
  name: 'P',
  description: '',
  tokens_in: 0,
  tokens_out: 0,
  cost_usd: null,
  budget_usd: null,
  budget_tokens: null,
  default_attempts: 1,
  created_at: '',
  updated_at: '',
  ...over,
});

describe('parseBudget', () => {
  it('reads whole token counts, with or without separators', () => {
    expect(parseBudget('tokens', '5000')).toEqual({ value: 5000 });
    expect(parseBudget('tokens', ' 1,000,000 ')).toEqual({ value: 1_000_000 });
    expect(parseBudget('tokens', '0')).toEqual({ value: 0 });
  });

  it('reads dollars, with or without a dollar sign', () => {
    expect(parseBudget('usd', '2.50')).toEqual({ value: 2.5 });
    expect(parseBudget('usd', '$1,250')).toEqual({ value: 1250 });
    expect(parseBudget('usd', '.5')).toEqual({ value: 0.5 });
  });

  it('says what is wrong with anything else', () => {
    expect(parseBudget('tokens', '')).toEqual({ error: 'Enter a number.' });
    expect(parseBudget('tokens', '-5')).toEqual({ error: 'A budget cannot be negative.' });
    expect(parseBudget('usd', '-0.5')).toEqual({ error: 'A budget cannot be negative.' });
    expect(parseBudget('tokens', '1.5')).toEqual({ error: 'Tokens are counted in whole numbers.' });
    expect(parseBudget('tokens', 'lots')).toEqual({ error: 'Enter a number of tokens, like 50000.' });
    expect(parseBudget('tokens', '1e3')).toEqual({ error: 'Enter a number of tokens, like 50000.' });
    expect(parseBudget('usd', '5 dollars')).toEqual({ error: 'Enter an amount in dollars, like 5 or 2.50.' });
    expect(parseBudget('usd', '2000000000')).toEqual({ error: 'That is more than the largest budget allowed ($1,000,000,000.00).' });
  });
});

describe('budgetProgress', () => {
  it('is null without a budget of that kind', () => {
    expect(budgetProgress(project({ budget_usd: 5 }), 'tokens')).toBeNull();
  });

  it('counts tokens in and out against a token budget; reached at 100 %', () => {
    expect(budgetProgress(project({ tokens_in: 600, tokens_out: 200, budget_tokens: 1000 }), 'tokens')).toEqual({
      used: 800,
      limit: 1000,
      percent: 80,
      reached: false,
    });
    expect(budgetProgress(project({ tokens_in: 800, tokens_out: 200, budget_tokens: 1000 }), 'tokens')?.reached).toBe(true);
    expect(budgetProgress(project({ budget_tokens: 0 }), 'tokens')).toEqual({ used: 0, limit: 0, percent: 100, reached: true });
  });

  it('counts an unknown cost as $0, as the server does', () => {
    expect(budgetProgress(project({ tokens_in: 5000, cost_usd: null, budget_usd: 1 }), 'usd')).toEqual({
      used: 0,
      limit: 1,
      percent: 0,
      reached: false,
    });
    expect(budgetProgress(project({ cost_usd: 1.5, budget_usd: 1 }), 'usd')?.percent).toBe(150);
  });
});
