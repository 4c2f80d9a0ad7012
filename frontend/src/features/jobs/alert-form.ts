import type { AlertDelivery, AlertWhen, JobAlert } from './types';

/** The conditions an alert can watch, as the form offers them. */
export const WHENS: { value: AlertWhen; label: string }[] = [
  { value: 'change_pct', label: 'changes by %' },
  { value: 'above', label: 'is above' },
  { value: 'below', label: 'is below' },
  { value: 'changed', label: 'changes at all' },
  { value: 'check_failed', label: 'a check fails' },
  { value: 'failed', label: 'the run fails' },
];

const NEEDS_VALUE: AlertWhen[] = ['above', 'below', 'change_pct'];
const NEEDS_RESULT: AlertWhen[] = ['above', 'below', 'change_pct', 'changed'];
export const needsValue = (when: AlertWhen) => NEEDS_VALUE.includes(when);
export const needsResult = (when: AlertWhen) => NEEDS_RESULT.includes(when);

/** A webhook's secret has at least this many characters (the server's MIN_SECRET_LENGTH). */
export const MIN_SECRET = 16;

/** The alert form as typed: strings, as the inputs hold them. */
export type AlertDraft = {
  when: AlertWhen;
  result: string;
  value: string;
  email: string;
  webhook: string;
  secret: string;
  share: boolean;
};

export const emptyDraft = (result = ''): AlertDraft => ({ when: 'change_pct', result, value: '', email: '', webhook: '', secret: '', share: false });

const EMAIL = /^[^\s@,;<>"]+@[^\s@,;<>"]+\.[^\s@,;<>"]+$/;

/** The addresses of the email field (comma, semicolon or space separated). */
export const addresses = (text: string) =>
  text
    .split(/[\s,;]+/)
    .map((a) => a.trim())
    .filter(Boolean);

/**
 * The alert the form describes, or the sentence that says what is missing (the same rules as
 * the server's, said before sending; the server's 422 still has the last word).
 */
export function draftToAlert(draft: AlertDraft, results: string[]): { alert: JobAlert } | { error: string } {
  const alert: JobAlert = { when: draft.when, deliver: [] };
  if (needsResult(draft.when)) {
    if (!draft.result) return { error: 'Choose the result the alert watches.' };
    if (!results.includes(draft.result)) return { error: `This job has no result named ${draft.result}.` };
    alert.result = draft.result;
  }
  if (needsValue(draft.when)) {
    const text = draft.value.trim();
    const value = Number(text);
    if (!text || !Number.isFinite(value)) return { error: draft.when === 'change_pct' ? 'Give the change in per cent (10 for a rise of 10%, -10 for a fall).' : 'Give the number to compare with.' };
    if (draft.when === 'change_pct' && value === 0) return { error: 'The change in per cent is not 0: 10 for a rise of 10% or more, -10 for a fall.' };
    alert.value = value;
  }
  const to = addresses(draft.email);
  const wrong = to.find((a) => !EMAIL.test(a));
  if (wrong) return { error: `${wrong} is not an email address.` };
  if (to.length) alert.deliver.push({ channel: 'email', to });
  const url = draft.webhook.trim();
  if (url) {
    if (!/^https?:\/\/[^\s/]+/i.test(url)) return { error: 'A webhook is an http(s) URL.' };
    const secret = draft.secret.trim();
    if (secret && secret.length < MIN_SECRET) return { error: `A webhook's secret has at least ${MIN_SECRET} characters.` };
    alert.deliver.push({ channel: 'webhook', url, ...(secret ? { secret } : {}) });
  }
  if (draft.share) alert.deliver.push({ channel: 'share' });
  if (!alert.deliver.length) return { error: 'Choose where the alert goes: an email, a webhook or the share link.' };
  return { alert };
}

const num = (v: number) => new Intl.NumberFormat('en-US', { maximumFractionDigits: 4 }).format(v);

/** An alert's condition in words: "revenue changes by 10% or more (up)", "a check fails". */
export function alertCondition(alert: JobAlert): string {
  const result = alert.result ?? 'the result';
  const value = alert.value ?? 0;
  switch (alert.when) {
    case 'above':
      return `${result} is above ${num(value)}`;
    case 'below':
      return `${result} is below ${num(value)}`;
    case 'change_pct':
      return value > 0 ? `${result} rises by ${num(value)}% or more` : `${result} falls by ${num(Math.abs(value))}% or more`;
    case 'changed':
      return `${result} changes`;
    case 'check_failed':
      return alert.result ? `the check ${alert.result} fails` : 'a check fails';
    case 'failed':
      return 'the run fails';
  }
}

/** Where an alert goes, in words: "email a@x.com, b@y.com · webhook hooks.example.com · share link". */
export function deliveryText(delivery: AlertDelivery): string {
  if (delivery.channel === 'email') return `email ${delivery.to.join(', ')}`;
  if (delivery.channel === 'webhook') {
    let host = delivery.url;
    try {
      host = new URL(delivery.url).host;
    } catch {
      /* shown as given */
    }
    return `webhook ${host}`;
  }
  return 'share link';
}
