import { describe, expect, it } from 'vitest';
import { appliesToText, cleanAppliesTo, FLAGGED_INSTRUCTIONS, personOf, shapedBy, sortItems, warningsOf } from './knowledge';

const names = { files: { f1: 'orders.csv' }, sources: { s1: 'Shop DB' } };

describe('appliesToText', () => {
  it('names the file or source, then the table and column', () => {
    expect(appliesToText({ file_id: 'f1', column: 'amount' }, names)).toBe('file orders.csv · column amount');
    expect(appliesToText({ source_id: 's1', table: 'public.orders' }, names)).toBe('source Shop DB · table public.orders');
  });
  it('says the whole project when nothing is named', () => {
    expect(appliesToText(null, names)).toBe('the whole project');
    expect(appliesToText({}, names)).toBe('the whole project');
  });
  it('says when the file or source is gone', () => {
    expect(appliesToText({ file_id: 'gone' }, names)).toBe('file a deleted file');
  });
});

describe('warningsOf', () => {
  it('says a proposal reads like instructions, and that its target is gone', () => {
    const gone = 'The file it applies to was deleted.';
    expect(warningsOf({ flags: ['instructions'], target_missing: gone })).toEqual([FLAGGED_INSTRUCTIONS, gone]);
    expect(warningsOf({ flags: [], target_missing: null })).toEqual([]);
  });
});

describe('sortItems', () => {
  it('puts proposals first, then approved, then rejected, newest first within each', () => {
    const items = [
      { id: 'a', status: 'approved' as const, created_at: '2026-01-02' },
      { id: 'r', status: 'rejected' as const, created_at: '2026-01-05' },
      { id: 'p1', status: 'proposed' as const, created_at: '2026-01-01' },
      { id: 'p2', status: 'proposed' as const, created_at: '2026-01-03' },
    ];
    expect(sortItems(items).map((i) => i.id)).toEqual(['p2', 'p1', 'a', 'r']);
  });
});

describe('personOf', () => {
  it('says "you" for the signed-in user and the email for others', () => {
    expect(personOf('me', 'me@x', 'me')).toBe('you');
    expect(personOf('ana', 'ana@x', 'me')).toBe('ana@x');
    expect(personOf(null, null, 'me')).toBeNull();
  });
});

describe('cleanAppliesTo', () => {
  it('keeps only what was filled in; nothing is the whole project', () => {
    expect(cleanAppliesTo({ file_id: 'f1', table: ' ', column: ' amount ' })).toEqual({ file_id: 'f1', column: 'amount' });
    expect(cleanAppliesTo({ file_id: null, table: '' })).toBeNull();
  });
});

describe('shapedBy', () => {
  it('splits what an answer used from what it was only given', () => {
    const k = [
      { item_id: '1', title: 'Active customer', used: true },
      { item_id: '2', title: 'Fiscal year', used: false },
    ];
    expect(shapedBy(k)).toEqual({ used: [k[0]], unused: [k[1]] });
    expect(shapedBy(undefined)).toEqual({ used: [], unused: [] });
  });
});
