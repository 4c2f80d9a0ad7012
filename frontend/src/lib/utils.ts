import { clsx, type ClassValue } from 'clsx';
import { twMerge } from 'tailwind-merge';

export function cn(...inputs: ClassValue[]) {
  return twMerge(clsx(inputs));
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

export function formatDuration(ms: number | null | undefined): string {
  if (ms == null) return '—';
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

// Fixed to en-US so the SPA reads like the server's own sentences ("1,234 of its 1,000 token budget").
const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const cents = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });
const smallSum = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumSignificantDigits: 2 });

/** A count with thousands separators: 3412 → "3,412". */
export function formatNumber(n: number): string {
  return integer.format(n);
}

/** "1 token", "3,412 tokens". */
export function formatTokens(n: number): string {
  return `${formatNumber(n)} ${n === 1 ? 'token' : 'tokens'}`;
}

/** Dollars as the server writes them: "$12.50" from a cent up, two significant digits below ("$0.0031", "$0.00001"); "—" when unknown. */
export function formatCost(usd: number | null | undefined): string {
  if (usd == null) return '—';
  return usd >= 0.01 || usd <= 0 ? cents.format(usd) : smallSum.format(usd);
}

/** What a session or project has spent: "3,412 tokens · $0.0031", the cost left out while no run had a known price. */
export function formatUsage(u: { tokens_in: number; tokens_out: number; cost_usd: number | null }): string {
  const tokens = formatTokens(u.tokens_in + u.tokens_out);
  return u.cost_usd == null ? tokens : `${tokens} · ${formatCost(u.cost_usd)}`;
}

export function formatDate(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
