import { toRunEvent, type RunEvent } from '@/features/runs/events';

/**
 * Streams of runs asked with `attempts: 3`, written as the server frames them (API.md "Attempts and
 * verdicts": `event:` name and `data:` JSON with run_id and seq), and read through toRunEvent as the
 * SPA reads them. The attempts interleave as parallel ones do.
 */
export const RUN = 'run-a';

type Frame = [event: string, data: Record<string, unknown>];

/** Numbers the frames 1, 2, 3… and parses each as the stream would. */
export function stream(frames: Frame[], run_id = RUN): RunEvent[] {
  return frames.map(([event, data], i) => {
    const e = toRunEvent(event, JSON.stringify({ run_id, seq: i + 1, ...data }));
    if (!e) throw new Error(`not an event: ${event}`);
    return e;
  });
}

const M = 'openai/scripted';
const STRATEGIES = ['pandas', 'SQL (DuckDB)', 'a second way, compared'];

export const started: Frame[] = [
  ['run.started', { session_id: 'session-1', model: M, query: 'Revenue in March?' }],
  ...STRATEGIES.map((strategy, i): Frame => ['attempt.started', { attempt: i + 1, strategy, model: M }]),
];

/** One step of an attempt: started, the model's text, code, output, finished. */
const step = (attempt: number, index: number, code: string, output: string): Frame[] => [
  ['step.started', { step: index, attempt }],
  ['model.delta', { step: index, attempt, text: 'Thought: sum the March orders.' }],
  ['step.code', { step: index, attempt, code }],
  ['step.output', { step: index, attempt, output }],
  ['step.finished', { step: index, attempt, duration_ms: 40, tokens_in: 100, tokens_out: 20 }],
];

const PANDAS = "df = pd.read_csv('orders.csv')\nprint(df[df.month == 3].amount.sum())";
const SQL = "print(duckdb.sql(\"select sum(amount) from 'orders.csv' where month = 3\").fetchone()[0])";
const SECOND = "march = df[df.month == 3]\nprint(march.groupby('day').amount.sum().sum())";

/** Interleaves the attempts' frames: one from each in turn, as three parallel loops emit them. */
function interleave(...lanes: Frame[][]): Frame[] {
  const out: Frame[] = [];
  for (let i = 0; lanes.some((l) => i < l.length); i++) for (const l of lanes) if (i < l.length) out.push(l[i]);
  return out;
}

const finished = (attempt: number, answer: string | null, status = 'succeeded'): Frame[] => [
  ...(answer != null ? ([['final', { attempt, answer }]] as Frame[]) : []),
  ['attempt.finished', { attempt, status, answer }],
];

const runFinished = (status: string, error: string | null = null): Frame => [
  'run.finished',
  { status, error, tokens_in: 900, tokens_out: 180, cost_usd: 0.0012, duration_ms: 4200 },
];

/** Three attempts that agree: verdict 3/3. */
export const agreeing = stream([
  ...started,
  ...interleave(
    [...step(1, 1, PANDAS, '4650.0\n'), ...finished(1, 'Revenue in March was 4,650.')],
    [...step(2, 1, SQL, '4650\n'), ...finished(2, 'March revenue: 4,650')],
    [...step(3, 1, SECOND, '4650.0\n'), ...finished(3, 'It was 4,650 in March.')],
  ),
  [
    'verdict',
    {
      agreement: '3/3',
      outcome: 'agree',
      chosen: 1,
      groups: [{ answer: '4650', attempts: [1, 2, 3] }],
      reason: 'All three computed 4,650.',
    },
  ],
  runFinished('succeeded'),
]);

/** One dissent: attempt 3 kept refunded orders; the majority wins, the reason names the dissent. */
export const majority = stream([
  ...started,
  ...interleave(
    [...step(1, 1, PANDAS, '4650.0\n'), ...finished(1, 'Revenue in March was 4,650.')],
    [...step(2, 1, SQL, '4650\n'), ...finished(2, 'March revenue: 4,650')],
    [...step(3, 1, SECOND, '4812.0\n'), ...finished(3, 'It was 4,812 in March.')],
  ),
  [
    'verdict',
    {
      agreement: '2/3',
      outcome: 'majority',
      chosen: 1,
      groups: [
        { answer: '4650', attempts: [1, 2] },
        { answer: '4812', attempts: [3] },
      ],
      reason: 'attempt 3 found 4,812 because it kept refunded orders',
    },
  ],
  runFinished('succeeded'),
]);

/** Attempt 2 fails (its step errors twice, a parallel repair finds nothing); the other two agree. */
export const oneFailed = stream([
  ...started,
  ...interleave(
    [...step(1, 1, PANDAS, '4650.0\n'), ...finished(1, 'Revenue in March was 4,650.')],
    [
      ['step.started', { step: 1, attempt: 2 }],
      ['step.code', { step: 1, attempt: 2, code: SQL }],
      ['step.error', { step: 1, attempt: 2, error: 'CatalogException: Table orders.csv does not exist' }],
      ['step.finished', { step: 1, attempt: 2, duration_ms: 30, tokens_in: 90, tokens_out: 18 }],
      ['step.started', { step: 2, attempt: 2 }],
      ['step.code', { step: 2, attempt: 2, code: SQL }],
      ['step.error', { step: 2, attempt: 2, error: 'CatalogException: Table orders.csv does not exist' }],
      ['step.finished', { step: 2, attempt: 2, duration_ms: 30, tokens_in: 90, tokens_out: 18 }],
      ['repair', { step: 2, attempt: 2, strategies: ['re-read the real columns', 'a simpler method', 'pandas instead'], chosen: null }],
      ...finished(2, null, 'failed'),
    ],
    [...step(3, 1, SECOND, '4650.0\n'), ...finished(3, 'It was 4,650 in March.')],
  ),
  [
    'verdict',
    {
      agreement: '2/3',
      outcome: 'agree',
      chosen: 1,
      groups: [{ answer: '4650', attempts: [1, 3] }],
      reason: 'attempt 2 failed; the other two computed 4,650.',
    },
  ],
  runFinished('succeeded'),
]);

/** Cancelled mid-way: attempt 1 had answered, 2 and 3 were still running. */
export const cancelled = stream([
  ...started,
  ...interleave(
    [...step(1, 1, PANDAS, '4650.0\n'), ...finished(1, 'Revenue in March was 4,650.')],
    [['step.started', { step: 1, attempt: 2 }], ['step.code', { step: 1, attempt: 2, code: SQL }]],
    [['step.started', { step: 1, attempt: 3 }]],
  ),
  runFinished('cancelled'),
]);

/** A single-attempt run with a parallel repair of step 2: strategy 2 continued. */
export const repaired = stream([
  ['run.started', { session_id: 'session-1', model: M, query: 'Revenue in March?' }],
  ['step.started', { step: 1 }],
  ['step.code', { step: 1, code: 'df.amount.sum()' }],
  ['step.error', { step: 1, error: "KeyError: 'amount'" }],
  ['step.finished', { step: 1, duration_ms: 10, tokens_in: 10, tokens_out: 5 }],
  ['step.started', { step: 2 }],
  ['step.code', { step: 2, code: "df['amount'].sum()" }],
  ['step.error', { step: 2, error: "KeyError: 'amount'" }],
  ['step.finished', { step: 2, duration_ms: 10, tokens_in: 10, tokens_out: 5 }],
  ['repair', { step: 2, strategies: ['re-read the real columns and types', 'a simpler method', 'a different library'], chosen: 2 }],
  ['step.started', { step: 3 }],
  ['step.code', { step: 3, code: "print(df['Amount (EUR)'].sum())" }],
  ['step.output', { step: 3, output: '4650\n' }],
  ['step.finished', { step: 3, duration_ms: 10, tokens_in: 10, tokens_out: 5 }],
  ['final', { answer: 'Revenue in March was 4,650.' }],
  runFinished('succeeded'),
]);

/** The events as the server's text/event-stream response carries them (GET /runs/{id}/events of a finished run). */
export function sseResponse(events: RunEvent[]): Response {
  const text = events
    .map(({ event, ...data }) => `id: ${data.seq}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    .join('');
  return new Response(text, { headers: { 'Content-Type': 'text/event-stream' } });
}

/** With review_repairs: attempt 2's step fails twice, and its repair waits for approval. */
export const repairWaits = stream([
  ...started,
  ['step.started', { step: 1, attempt: 2 }],
  ['step.code', { step: 1, attempt: 2, code: 'df.amount.sum()' }],
  ['step.error', { step: 1, attempt: 2, error: "KeyError: 'amount'" }],
  ['step.finished', { step: 1, attempt: 2, duration_ms: 10, tokens_in: 10, tokens_out: 5 }],
  ['step.started', { step: 1, attempt: 1 }],
  ['step.started', { step: 2, attempt: 2 }],
  ['step.code', { step: 2, attempt: 2, code: "print(df['Amount (EUR)'].sum())" }],
  ['approval.requested', { step: 2, attempt: 2, code: "print(df['Amount (EUR)'].sum())" }],
]);
