import { describe, expect, it } from 'vitest';
import { alertCondition, deliveryText, draftToAlert, emptyDraft } from './alert-form';
import { changeText, formatPct, tableOf, valueText } from './change';
import { awaitingRepair, REPAIR_WAIT_MS } from './queries';
import { cronInWords, inZone, relativeTime, scheduleInWords } from './schedule-words';

describe('a schedule in words', () => {
  it('says the common crons as a person would, with the time zone', () => {
    expect(scheduleInWords({ cron: '0 8 * * 1', timezone: 'Europe/Paris' })).toBe('Every Monday at 08:00 Europe/Paris');
    expect(scheduleInWords({ cron: '0 8 * * MON', timezone: 'UTC' })).toBe('Every Monday at 08:00 UTC');
    expect(cronInWords('30 7 * * 1-5')).toBe('Every weekday at 07:30');
    expect(cronInWords('0 6 * * *')).toBe('Every day at 06:00');
    expect(cronInWords('0 9 * * 1,3,5')).toBe('Every Monday, Wednesday and Friday at 09:00');
    expect(cronInWords('0 8 1 * *')).toBe('On the 1st of every month at 08:00');
    expect(cronInWords('0 8 22 * *')).toBe('On the 22nd of every month at 08:00');
    expect(cronInWords('*/15 * * * *')).toBe('Every 15 minutes');
    expect(cronInWords('5 * * * *')).toBe('Every hour at :05');
    expect(cronInWords('0 */2 * * *')).toBe('Every 2 hours at :00');
  });

  it('says intervals in minutes, hours or days, and no schedule as on demand', () => {
    expect(scheduleInWords({ every_minutes: 30, timezone: 'UTC' })).toBe('Every 30 minutes');
    expect(scheduleInWords({ every_minutes: 60, timezone: 'UTC' })).toBe('Every hour');
    expect(scheduleInWords({ every_minutes: 180, timezone: 'UTC' })).toBe('Every 3 hours');
    expect(scheduleInWords({ every_minutes: 1440, timezone: 'UTC' })).toBe('Every day');
    expect(scheduleInWords(null)).toBe('On demand');
    expect(scheduleInWords(undefined)).toBe('On demand');
  });

  it('shows an uncommon cron as itself rather than guessing', () => {
    expect(scheduleInWords({ cron: '5 4 * 2 *', timezone: 'Asia/Tokyo' })).toBe('Cron 5 4 * 2 * (Asia/Tokyo)');
    expect(cronInWords('0 8 * * 9')).toBeNull();
    expect(cronInWords('not a cron')).toBeNull();
  });

  it('says a next run as the schedule\'s zone reads it', () => {
    expect(inZone('2026-11-30T07:00:00Z', 'Europe/Paris')).toBe('Monday 30 Nov, 08:00 Europe/Paris');
  });

  it('says when relative to now, both ways', () => {
    const now = Date.parse('2026-11-30T08:00:00Z');
    expect(relativeTime('2026-12-03T08:00:00Z', now)).toBe('in 3 days');
    expect(relativeTime('2026-11-30T10:00:00Z', now)).toBe('in 2 hours');
    expect(relativeTime('2026-11-30T07:55:00Z', now)).toBe('5 minutes ago');
    expect(relativeTime('2026-11-30T08:00:10Z', now)).toBe('just now');
  });
});

describe('a change between runs', () => {
  it('reads before → after with a signed per cent and its direction', () => {
    expect(changeText({ before: 48210, after: 52000, pct: 7.8614 })).toEqual({ text: '48,210 → 52,000', pct: '+7.9%', direction: 'up', rows: null });
    expect(changeText({ before: 200, after: 180, pct: -10 })).toMatchObject({ text: '200 → 180', pct: '\u221210%', direction: 'down' });
    expect(changeText({ before: 5, after: 5, pct: 0 })).toMatchObject({ pct: '0%', direction: 'same' });
  });

  it('says a first run has nothing to compare with', () => {
    expect(changeText({ before: null, after: 1234.5, pct: null })).toMatchObject({ text: 'new: 1,234.5', pct: null, direction: 'new' });
  });

  it('counts a table by its rows, with those added and removed', () => {
    expect(changeText({ before: 12, after: 15, pct: 25, changed: true, rows_added: 4, rows_removed: 1 }, true)).toEqual({
      text: '12 rows → 15 rows',
      pct: '+25%',
      direction: 'up',
      rows: '4 added, 1 removed',
    });
  });

  it('rounds a per cent to one decimal', () => {
    expect(formatPct(12.345)).toBe('+12.3%');
    expect(formatPct(-0.04)).toBe('0%');
  });

  it('reads tables kept as columns and rows, or as records', () => {
    expect(tableOf({ columns: ['region', 'revenue'], rows: [['r1', 10]], row_count: 4 })).toEqual({ columns: ['region', 'revenue'], rows: [['r1', 10]], rowCount: 4 });
    expect(tableOf([{ a: 1 }, { a: 2, b: 3 }])).toEqual({ columns: ['a', 'b'], rows: [[1, undefined], [2, 3]], rowCount: 2 });
    expect(tableOf(12)).toBeNull();
    expect(valueText({ columns: ['a'], rows: [[1]], row_count: 1 })).toBe('1 row');
    expect(valueText(1234567.891)).toBe('1,234,567.891');
  });
});

describe('the alert form', () => {
  const results = ['answer_1', 'by_region'];
  const draft = (over: Partial<ReturnType<typeof emptyDraft>>) => ({ ...emptyDraft('answer_1'), ...over });

  it('makes a % change alert to an email address', () => {
    expect(draftToAlert(draft({ value: '-10', email: 'team@example.com' }), results)).toEqual({
      alert: { when: 'change_pct', result: 'answer_1', value: -10, deliver: [{ channel: 'email', to: ['team@example.com'] }] },
    });
  });

  it('says what is missing, as the server would', () => {
    expect(draftToAlert(draft({ value: '', email: 'a@b.co' }), results)).toEqual({ error: 'Give the change in per cent (10 for a rise of 10%, -10 for a fall).' });
    expect(draftToAlert(draft({ value: '0', email: 'a@b.co' }), results)).toMatchObject({ error: expect.stringContaining('not 0') });
    expect(draftToAlert(draft({ value: '10' }), results)).toEqual({ error: 'Choose where the alert goes: an email, a webhook or the share link.' });
    expect(draftToAlert(draft({ value: '10', email: 'not-an-address' }), results)).toEqual({ error: 'not-an-address is not an email address.' });
    expect(draftToAlert(draft({ value: '10', webhook: 'ftp://x' }), results)).toEqual({ error: 'A webhook is an http(s) URL.' });
    expect(draftToAlert(draft({ value: '10', webhook: 'https://hooks.example.com/x', secret: 'short' }), results)).toMatchObject({ error: expect.stringContaining('16 characters') });
    expect(draftToAlert(draft({ result: 'gone', when: 'changed', share: true }), results)).toEqual({ error: 'This job has no result named gone.' });
  });

  it('takes no result or value for a failed run, and sends a webhook with its secret', () => {
    const made = draftToAlert(draft({ when: 'failed', value: '5', webhook: 'https://hooks.example.com/x', secret: 'a-secret-of-16-chars', share: true }), results);
    expect(made).toEqual({
      alert: { when: 'failed', deliver: [{ channel: 'webhook', url: 'https://hooks.example.com/x', secret: 'a-secret-of-16-chars' }, { channel: 'share' }] },
    });
  });

  it('says an alert in words', () => {
    expect(alertCondition({ when: 'change_pct', result: 'revenue', value: -10, deliver: [] })).toBe('revenue falls by 10% or more');
    expect(alertCondition({ when: 'change_pct', result: 'revenue', value: 5, deliver: [] })).toBe('revenue rises by 5% or more');
    expect(alertCondition({ when: 'above', result: 'revenue', value: 1000, deliver: [] })).toBe('revenue is above 1,000');
    expect(alertCondition({ when: 'check_failed', deliver: [] })).toBe('a check fails');
    expect(deliveryText({ channel: 'webhook', url: 'https://hooks.example.com/a/b' })).toBe('webhook hooks.example.com');
    expect(deliveryText({ channel: 'email', to: ['a@b.co', 'c@d.co'] })).toBe('email a@b.co, c@d.co');
  });
});

describe('a run that just failed', () => {
  const failed = (over: Record<string, unknown> = {}) =>
    [{ id: 'f1', status: 'failed', repair: null, finished_at: new Date(1_000_000).toISOString(), ...over }] as unknown as Parameters<typeof awaitingRepair>[0];
  it('is watched for its repair for a while after this page first saw it, then no more', () => {
    expect(awaitingRepair(failed(), 1_000_000)).toBe(true);
    expect(awaitingRepair(failed(), 1_000_000 + REPAIR_WAIT_MS - 1)).toBe(true);
    expect(awaitingRepair(failed(), 1_000_000 + REPAIR_WAIT_MS)).toBe(false);
  });
  it('is not watched once its repair shows, when it succeeded, or when it failed long ago', () => {
    expect(awaitingRepair(failed({ id: 'f2', repair: { status: 'repairing' } }), 1_000_000)).toBe(false);
    expect(awaitingRepair(failed({ id: 'f3', status: 'succeeded' }), 1_000_000)).toBe(false);
    expect(awaitingRepair(failed({ id: 'f4' }), 1_000_000 + 3_600_000)).toBe(false);
  });
});
