import { describe, expect, it } from 'vitest';
import type { SessionOut } from '@/client';
import { flattenTree, questionsOf, titleUnder } from './session-tree';

const s = (id: string, parent: string | null = null) => ({ id, title: id, parent_session_id: parent }) as SessionOut;

describe('flattenTree', () => {
  const sessions = [s('b1', 'root'), s('root'), s('other'), s('b2', 'root'), s('b1a', 'b1'), s('orphan', 'gone')];

  it('puts branches under their parent, indented, and an orphan at the top level', () => {
    const rows = flattenTree(sessions, new Set());
    expect(rows.map((r) => `${'-'.repeat(r.depth)}${r.session.id}`)).toEqual(['root', '-b1', '--b1a', '-b2', 'other', 'orphan']);
    expect(rows[0]).toMatchObject({ children: 2, descendants: 3, open: true });
  });

  it('leaves out the branches of a closed session', () => {
    const rows = flattenTree(sessions, new Set(['root']));
    expect(rows.map((r) => r.session.id)).toEqual(['root', 'other', 'orphan']);
    expect(rows[0].open).toBe(false);
  });
});

describe('questionsOf', () => {
  it('maps each branch to the question it diverges after', () => {
    const tree = {
      session: s('root'),
      branched_after_run_id: null,
      children: [{ session: s('b1', 'root'), branched_after_run_id: 'r1', after_query: 'Total revenue?', children: [] }],
    };
    expect([...questionsOf([tree, undefined])]).toEqual([['b1', 'Total revenue?']]);
  });
});

describe('titleUnder', () => {
  it("drops the parent's title from a branch's title made of it, and keeps any other title", () => {
    const parent = { ...s('p'), title: 'What if x' };
    expect(titleUnder({ ...s('b', 'p'), title: 'What if x — branch after Q1' }, parent)).toBe('branch after Q1');
    expect(titleUnder({ ...s('b', 'p'), title: 'Outliers dropped' }, parent)).toBe('Outliers dropped');
    expect(titleUnder({ ...s('b', 'p'), title: 'What if x — branch after Q1' }, undefined)).toBe('What if x — branch after Q1');
  });
});
