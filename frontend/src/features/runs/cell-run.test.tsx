import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { RunOut } from '@/client';
import { CellRun, cellLabel } from './cell-run';
import { fromHistory } from './run-reducer';
import { mergeRuns } from './use-session-runs';

const stored: RunOut = {
  id: 'r1',
  session_id: 's',
  status: 'succeeded',
  kind: 'cell',
  cell: { language: 'sql', source: 'shop', variable: 'df_sql_1' },
  query: 'SELECT region FROM orders',
  model: '',
  final_answer: null,
  error: null,
  steps: [
    {
      index: 1,
      thought: null,
      code: 'df_sql_1 = sql("""SELECT region FROM orders""", source=\'shop\')',
      output: '2 rows, kept as df_sql_1',
      error: null,
      duration_ms: 12,
      tokens_in: 0,
      tokens_out: 0,
    },
  ],
  plans: [],
  verifications: [],
  inputs: [],
  approvals: [],
  pending: null,
  artifacts: [],
  tokens_in: 0,
  tokens_out: 0,
  cost_usd: null,
  created_at: '2026-11-29T08:00:00Z',
  started_at: null,
  finished_at: null,
} as unknown as RunOut;

describe('CellRun', () => {
  it('names a cell by its language and source', () => {
    expect(cellLabel({ language: 'python' })).toBe('Python cell');
    expect(cellLabel({ language: 'sql', source: 'shop' })).toBe('SQL cell · shop');
  });

  it('shows the code with its cell mark, what it printed and no model', () => {
    const qc = new QueryClient();
    render(
      <QueryClientProvider client={qc}>
        <CellRun run={fromHistory(stored)} cell={stored.cell!} asked={{ by: 'you', at: null }} />
      </QueryClientProvider>,
    );
    expect(screen.getByTestId('cell-mark').textContent).toBe(' SQL cell · shop');
    expect(screen.getByTestId('code').textContent).toContain('SELECT region FROM orders');
    expect(screen.getByTestId('step-output').textContent).toBe('2 rows, kept as df_sql_1');
    expect(screen.getByTestId('run-footer').textContent).toContain('no model');
    expect(screen.getByTestId('run').dataset.kind).toBe('cell');
  });

  it('is a cell in the session list from the history, or from this tab before the history has it', () => {
    const state = { views: {}, started: null, connection: {}, pinned: {}, cells: {} };
    expect(mergeRuns([stored], state)[0].cell).toEqual(stored.cell);
    expect(mergeRuns([{ ...stored, kind: 'question', cell: null }], state)[0].cell).toBeNull();
  });
});
