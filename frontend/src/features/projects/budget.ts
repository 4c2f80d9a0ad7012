import type { ProjectOut } from '@/client';
import { formatCost, formatNumber } from '@/lib/utils';

export type BudgetKind = 'tokens' | 'usd';

// The server's bounds (ProjectUpdate): larger values answer 422.
const MAX: Record<BudgetKind, number> = { tokens: 1e15, usd: 1e9 };

/**
 * Reads what the user typed as a budget: "5000", "5,000", "$2.50".
 *
 * Returns the number to send, or the sentence saying what is wrong with the input.
 */
export function parseBudget(kind: BudgetKind, text: string): { value: number } | { error: string } {
  let cleaned = text.replace(/[\s,_]/g, '');
  if (kind === 'usd') cleaned = cleaned.replace(/^\$/, '');
  if (!cleaned) return { error: 'Enter a number.' };
  const value = /^[-+]?(\d+\.?\d*|\.\d+)$/.test(cleaned) ? Number(cleaned) : NaN;
  if (!Number.isFinite(value)) return { error: kind === 'tokens' ? 'Enter a number of tokens, like 50000.' : 'Enter an amount in dollars, like 5 or 2.50.' };
  if (value < 0) return { error: 'A budget cannot be negative.' };
  if (kind === 'tokens' && !Number.isInteger(value)) return { error: 'Tokens are counted in whole numbers.' };
  if (value > MAX[kind]) {
    return { error: `That is more than the largest budget allowed (${kind === 'tokens' ? `${formatNumber(MAX.tokens)} tokens` : formatCost(MAX.usd)}).` };
  }
  return { value };
}

export type BudgetProgress = {
  used: number;
  limit: number;
  /** used / limit in percent (100 for a zero budget). */
  percent: number;
  /** The server refuses new questions from here on: used ≥ limit. */
  reached: boolean;
};

/** How much of the project's budget of one kind is spent; null when there is no such budget. */
export function budgetProgress(project: ProjectOut, kind: BudgetKind): BudgetProgress | null {
  const limit = kind === 'tokens' ? project.budget_tokens : project.budget_usd;
  if (limit == null) return null;
  // As the server counts: tokens in and out; a cost nobody could price counts as $0.
  const used = kind === 'tokens' ? project.tokens_in + project.tokens_out : (project.cost_usd ?? 0);
  return { used, limit, percent: limit > 0 ? (used / limit) * 100 : 100, reached: used >= limit };
}
