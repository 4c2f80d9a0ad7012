import type { CheckRun, CheckRunStatus } from './types';

/**
 * "revenue=1200, customers=42" (or one pair a line) → {revenue: "1200", customers: "42"}, or the
 * sentence saying what is wrong. Names are the eval format's: letters, digits and underscores.
 */
export function parseExpected(text: string): { expected: Record<string, string> } | { problem: string } {
  const expected: Record<string, string> = {};
  const pairs = text
    .split(/[\n,;]/)
    .map((p) => p.trim())
    .filter(Boolean);
  if (!pairs.length) return { problem: 'Say what the answer must be: one or more name=value pairs, e.g. revenue=1200.' };
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    const name = pair.slice(0, Math.max(at, 0)).trim();
    const value = pair.slice(at + 1).trim();
    if (at < 0 || !name || !value) return { problem: `“${pair}” is not a name=value pair.` };
    if (!/^\w+$/.test(name)) return { problem: `“${name}”: a name has only letters, digits and underscores.` };
    if (name in expected) return { problem: `“${name}” is given twice.` };
    expected[name] = value;
  }
  return { expected };
}

/** {revenue: 1200} → "revenue=1200, …", for editing and showing. */
export const expectedText = (expected: Record<string, unknown>) =>
  Object.entries(expected)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(', ');

export const isGoing = (s: CheckRunStatus) => s === 'queued' || s === 'running';

/** "83%" (or "—" before there is one). */
export const accuracyText = (a: number | null | undefined) => (a == null ? '—' : `${Math.round(a * 100)}%`);

/** How many checks have a result so far: passed, failed or erred. */
export const doneCount = (run: Pick<CheckRun, 'passed' | 'failed' | 'errors'>) => run.passed + run.failed + run.errors;

/** The change from the check run before: "+17 points", "−5 points", "no change"; null with nothing to compare. */
export function accuracyChange(run: CheckRun, before: CheckRun | undefined): string | null {
  if (!before || run.accuracy == null || before.accuracy == null) return null;
  const d = Math.round((run.accuracy - before.accuracy) * 100);
  if (d === 0) return 'no change';
  return `${d > 0 ? '+' : '−'}${Math.abs(d)} point${Math.abs(d) === 1 ? '' : 's'}`;
}

/** The @name[value] pairs an answer ends with (the eval format), as an expected answer: "revenue=1200, …". */
export function expectedFromAnswer(answer: string | null | undefined): string {
  const pairs = [...(answer ?? '').matchAll(/@(\w+)\[([^\]\n]*)\]/g)].map((m) => `${m[1]}=${m[2].trim()}`);
  return pairs.join(', ');
}
