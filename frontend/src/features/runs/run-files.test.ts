import { describe, expect, it } from 'vitest';
import type { FileOut } from '@/client';
import { changedFiles } from './run-files';
import { emptyRun } from './run-reducer';

const file = (id: string, name: string, version: number) => ({ id, name, version }) as FileOut;
const used = (id: string, name: string, version: number) => ({ file_id: id, name, version, sha256: 'x' });

describe('changedFiles', () => {
  it('names the files the sandbox saw a run read that have a newer version now, whatever its code says', () => {
    const run = {
      ...emptyRun('r'),
      // The code names sales.csv only in a comment, and reads costs.csv through a glob.
      steps: [{ index: 1, thought: '', code: "# sales.csv\nduckdb.sql(\"select * from 'c*.csv'\")", output: null, error: null, durationMs: 1, tokensIn: 0, tokensOut: 0, finished: true, queries: [] }],
    };
    const files = [
      { ...used('a', 'sales.csv', 1), read: false },
      { ...used('b', 'costs.csv', 1), read: true },
    ];
    const current = [file('a', 'sales.csv', 2), file('b', 'costs.csv', 3)];
    expect(changedFiles(run, files, current, ['a'])).toEqual([{ name: 'costs.csv', from: 1, to: 3 }]);
  });

  it('guesses from the code and the pinned files for a run that does not say what it read', () => {
    const run = {
      ...emptyRun('r'),
      steps: [{ index: 1, thought: '', code: "pd.read_csv('sales.csv')", output: null, error: null, durationMs: 1, tokensIn: 0, tokensOut: 0, finished: true, queries: [] }],
    };
    const files = [used('a', 'sales.csv', 1), used('b', 'costs.csv', 1), used('c', 'other.csv', 2)];
    const current = [file('a', 'sales.csv', 2), file('b', 'costs.csv', 3), file('c', 'other.csv', 2)];
    expect(changedFiles(run, files, current)).toEqual([{ name: 'sales.csv', from: 1, to: 2 }]);
    expect(changedFiles(run, files, current, ['b', 'c'])).toEqual([
      { name: 'sales.csv', from: 1, to: 2 },
      { name: 'costs.csv', from: 1, to: 3 },
    ]);
    expect(changedFiles(run, files, [])).toEqual([]);
  });
});
