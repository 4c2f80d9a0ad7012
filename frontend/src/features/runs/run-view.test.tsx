import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import type { RunOut } from '@/client';
import { runStarted } from '@/test/runs';
import { keepLineBreaks, previewLine } from './plan-card';
import { emptyRun, fromHistory, reduceRunEvents, type RunView as RunViewModel } from './run-reducer';
import { replyActions } from './mutations';
import { RunView, stepsSummary } from './run-view';
import { askedOf } from './session-chat';

const R = 'run-1';
const replies = replyActions(() => undefined);
const REVISION = 'Your final answer was checked before the user saw it, and the check asks for a revision: The output shows 4490.75, not 5000.';

const step = (index: number, code: string, error: string | null = null): RunOut['steps'][number] => ({
  index,
  thought: 'Thought: go.',
  code,
  output: null,
  error,
  duration_ms: 10,
  tokens_in: 1,
  tokens_out: 1,
});

const stored: RunOut = {
  id: R,
  session_id: 's',
  status: 'succeeded',
  query: 'Total revenue?',
  model: 'm',
  final_answer: 'Total revenue is **4490.75**.',
  error: null,
  steps: [
    step(1, 'df = pd.read_csv("sales.csv")'),
    step(2, 'print(df.revenue.sum())'),
    step(3, 'final_answer("5000")', REVISION),
    step(4, 'final_answer("4490.75")'),
  ],
  plans: [
    { step: 1, text: '1. Read sales.csv.\n2. Sum the revenue.', tokens_in: 30, tokens_out: 8 },
    { step: 3, text: 'Established: the total is 4490.75.\n1. Answer with it.', tokens_in: 40, tokens_out: 9 },
  ],
  verifications: [
    { step: 3, verdict: 'revise', reason: 'The output shows 4490.75, not 5000.', tokens_in: 20, tokens_out: 5 },
    { step: 4, verdict: 'approve', reason: 'It matches the printed total.', tokens_in: 20, tokens_out: 5 },
  ],
  inputs: [],
  approvals: [],
  pending: null,
  artifacts: [],
  tokens_in: 100,
  tokens_out: 40,
  cost_usd: null,
  created_at: '2026-01-01T00:00:00Z',
  started_at: null,
  finished_at: null,
};

function show(run: RunViewModel, live = false, openSteps = true) {
  const qc = new QueryClient();
  const result = render(
    <QueryClientProvider client={qc}>
      <RunView replies={replies} run={run} live={live} />
    </QueryClientProvider>,
  );
  // A finished run folds its steps under its answer: open them to look at the flow.
  const toggle = screen.queryByTestId('steps-toggle');
  if (openSteps && toggle) fireEvent.click(toggle);
  return result;
}

/** The run's flow as a user reads it, top to bottom. */
const flow = (container: HTMLElement) =>
  [...container.querySelectorAll('[data-testid=run-plan], [data-testid=step-card] > header > span:first-child, [data-testid=final-answer], [data-testid=answer-check]')].map(
    (el) => el.getAttribute('aria-label') ?? (el.getAttribute('data-testid') === 'final-answer' ? 'answer' : el.textContent?.split(':')[0]),
  );

describe('RunView with plans and checks', () => {
  it('puts the answer and its check first, then each plan above the step it was written before', () => {
    const { container } = show(fromHistory(stored));
    expect(flow(container)).toEqual([
      'answer',
      'Checked',
      'Plan',
      'Step 1',
      'Step 2',
      'Revised plan (before step 3)',
      'Step 3',
      'Step 4',
    ]);
    expect(screen.getByTestId('answer-check').textContent).toBe('Checked: It matches the printed total.');
    expect(screen.getByTestId('answer-check').getAttribute('data-verdict')).toBe('approve');
  });

  it('shows the latest plan open, as Markdown, and an older one folded with its first line', () => {
    show(fromHistory(stored));
    const [first, revised] = screen.getAllByTestId('run-plan');
    expect(within(revised).getByTestId('plan-text').querySelectorAll('ol li')).toHaveLength(1);
    expect(within(revised).getByTestId('plan-text').textContent).toContain('Established: the total is 4490.75.');
    expect(within(first).queryByTestId('plan-text')).toBeNull();
    expect(within(first).getByRole('button').textContent).toContain('1. Read sales.csv.');
    fireEvent.click(within(first).getByRole('button', { expanded: false }));
    expect([...within(first).getByTestId('plan-text').querySelectorAll('li')].map((li) => li.textContent)).toEqual([
      'Read sales.csv.',
      'Sum the revenue.',
    ]);
  });

  it('shows a revision request in the flow, not as a code error', () => {
    show(fromHistory(stored));
    const third = screen.getAllByTestId('step-card')[2];
    expect(within(third).getByTestId('revision-request').textContent).toBe('Check asked for a revision: The output shows 4490.75, not 5000.');
    expect(within(third).getByText('revision requested — continued in step 4')).toBeTruthy();
    expect(within(third).queryByRole('alert')).toBeNull();
    expect(within(third).queryByTestId('step-error')).toBeNull();
    expect(third.className).not.toContain('border-destructive');
    expect(screen.queryAllByRole('alert')).toEqual([]);
  });

  it('keeps a real code error red next to a revision request', () => {
    show(fromHistory({ ...stored, steps: stored.steps.map((s) => (s.index === 1 ? { ...s, error: 'NameError: pd' } : s)) }));
    expect(screen.getByRole('alert').textContent).toContain('NameError: pd');
    expect(screen.getAllByTestId('revision-request')).toHaveLength(1);
  });

  it('shows an answer that stands with the check still in doubt as a warning', () => {
    show(fromHistory({ ...stored, verifications: [...stored.verifications.slice(0, 1), { ...stored.verifications[0], step: 4, reason: 'Still not shown.' }] }));
    const check = screen.getByTestId('answer-check');
    expect(check.textContent).toBe('The check still has doubts: Still not shown.');
    expect(check.getAttribute('data-verdict')).toBe('revise');
    expect(screen.getAllByTestId('revision-request')).toHaveLength(1);
  });

  it('streams a plan before step 1, open, instead of "Thinking…"', () => {
    const run = reduceRunEvents(emptyRun(R, 'Total revenue?'), [
      runStarted(R, 1),
      { event: 'plan.delta', run_id: R, seq: 2, step: 1, text: '1. Read sales.csv.\n2. Sum' },
    ]);
    show(run, true);
    const plan = screen.getByTestId('run-plan');
    expect(within(plan).getByLabelText('Plan being written')).toBeTruthy();
    expect(within(plan).getByTestId('plan-text').textContent).toContain('Sum');
    expect(screen.queryByText('Thinking…')).toBeNull();
    expect(screen.queryByTestId('answer-check')).toBeNull();
  });

  it('folds the older plan away when a revision streams in', () => {
    const events = [
      runStarted(R, 1),
      { event: 'plan', run_id: R, seq: 2, step: 1, text: '1. Read.', tokens_in: 1, tokens_out: 1 },
      { event: 'step.started', run_id: R, seq: 3, step: 1 },
    ] as const;
    const { rerender } = show(reduceRunEvents(emptyRun(R), [...events]), true);
    expect(screen.getByTestId('plan-text').textContent?.trim()).toBe('Read.');
    const revised = reduceRunEvents(emptyRun(R), [...events, { event: 'plan.delta', run_id: R, seq: 4, step: 3, text: 'Established' }]);
    rerender(
      <QueryClientProvider client={new QueryClient()}>
        <RunView replies={replies} run={revised} live />
      </QueryClientProvider>,
    );
    expect(screen.getAllByTestId('plan-text').map((p) => p.textContent?.trim())).toEqual(['Established']);
  });
});

describe('a finished run reads like an answer', () => {
  const artifact = (id: string, kind: string, name: string, step: number) => ({
    id,
    run_id: R,
    session_id: 's',
    step,
    kind: kind as 'plotly',
    name,
    mime: 'x',
    size: 10,
    url: `/api/v1/artifacts/${id}/content`,
    created_at: '2026-01-01T00:00:00Z',
  });
  const answered: RunOut = {
    ...stored,
    plans: [],
    verifications: [],
    steps: [step(1, 'df = pd.read_csv("sales.csv")', 'NameError: pd'), step(2, 'display(df)'), step(3, 'final_answer("r0")')],
    final_answer: '**Region r0** sold the most.',
    artifacts: [
      artifact('chart', 'plotly', 'Units by region.json', 2),
      artifact('table', 'table', 'table-1.json', 2),
      artifact('csv', 'file', 'table-1.csv', 2),
    ],
    started_at: '2026-01-01T00:00:00Z',
    finished_at: '2026-01-01T00:00:03.900Z',
  };

  it('shows the answer, then every result under it, the chart first, then the steps folded in one line', () => {
    const { container } = show(
      fromHistory({ ...answered, artifacts: [...answered.artifacts, artifact('file', 'file', 'by_region.csv', 3)] }),
      false,
      false,
    );
    const top = screen.getByTestId('run-result');
    expect(within(top).getByTestId('final-answer').textContent).toBe('Region r0 sold the most.');
    // What the user reads under the answer, top to bottom: the chart, the table (with its CSV), the file.
    const results = [...within(top).getByTestId('answer-results').querySelectorAll('figure')];
    expect(results.map((f) => [f.getAttribute('data-testid'), within(f as HTMLElement).getByTestId('artifact-title').textContent])).toEqual([
      ['artifact-plotly', 'Units by region'],
      ['artifact-table', 'table-1'],
      ['artifact-file', 'by_region.csv'],
    ]);
    expect(within(top).getByRole('button', { name: 'Download Units by region as PNG' })).toBeTruthy();
    const table = within(top).getByTestId('artifact-table');
    expect(within(table).getByRole('button', { name: 'Download table-1 as CSV' })).toBeTruthy();
    expect(within(table).getByRole('button', { name: 'Download table-1 as Excel' })).toBeTruthy();
    expect(within(top).getByRole('button', { name: 'Download by_region.csv' })).toBeTruthy();
    expect(screen.queryByTestId('step-card')).toBeNull();
    const toggle = screen.getByTestId('steps-toggle');
    expect(toggle.textContent).toContain('3 steps · 1 fixed error · 3.9 s');
    expect(toggle.textContent).not.toContain('more result');
    expect(top.compareDocumentPosition(toggle) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    fireEvent.click(toggle);
    expect(screen.getAllByTestId('step-card')).toHaveLength(3);
    // Opening the steps does not show the results a second time.
    expect(container.querySelectorAll('[data-testid=artifact-table]')).toHaveLength(1);
    expect(container.querySelectorAll('[data-testid=artifact-plotly]')).toHaveLength(1);
  });

  it('keeps a chart in view, in its step, when the next step starts while the run goes', () => {
    const chart = artifact('chart', 'plotly', 'Units by region.json', 1);
    const events = [
      runStarted(R, 1),
      { event: 'step.started', run_id: R, seq: 2, step: 1 },
      { event: 'step.code', run_id: R, seq: 3, step: 1, code: 'fig.show()' },
      { event: 'artifact', run_id: R, seq: 4, step: 1, artifact: chart },
      { event: 'step.finished', run_id: R, seq: 5, step: 1, duration_ms: 5, tokens_in: 1, tokens_out: 1 },
      { event: 'step.started', run_id: R, seq: 6, step: 2 },
    ];
    show(reduceRunEvents(emptyRun(R), events as never), true, false);
    const [first, second] = screen.getAllByTestId('step-card');
    expect(first.getAttribute('data-open')).toBe('false');
    expect(within(first).queryByTestId('code')).toBeNull();
    expect(within(first).getByTestId('artifact-title').textContent).toBe('Units by region');
    expect(second.getAttribute('data-open')).toBe('true');
  });

  it('shows a failed run’s error at the top instead of an answer', () => {
    show(fromHistory({ ...answered, status: 'failed', final_answer: null, error: 'The model could not be reached.', artifacts: [] }), false, false);
    expect(within(screen.getByTestId('run-result')).getByRole('alert').textContent).toBe('The model could not be reached.');
    expect(screen.queryByTestId('final-answer')).toBeNull();
  });

  it('retries the same question, and sends an edited one, as new runs', () => {
    const onResend = vi.fn();
    render(
      <QueryClientProvider client={new QueryClient()}>
        <RunView replies={replies} run={fromHistory({ ...answered, artifacts: [] })} onResend={onResend} />
      </QueryClientProvider>,
    );
    fireEvent.click(screen.getByRole('button', { name: /Retry/ }));
    expect(onResend).toHaveBeenLastCalledWith('Total revenue?');
    fireEvent.click(screen.getByRole('button', { name: /Edit/ }));
    const box = screen.getByRole('textbox', { name: 'Edit the question' });
    fireEvent.keyDown(box, { key: 'Escape' });
    expect(screen.queryByRole('textbox')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: /Edit/ }));
    fireEvent.change(screen.getByRole('textbox', { name: 'Edit the question' }), { target: { value: 'Total units?' } });
    fireEvent.keyDown(screen.getByRole('textbox', { name: 'Edit the question' }), { key: 'Enter' });
    expect(onResend).toHaveBeenLastCalledWith('Total units?');
    expect(screen.queryByRole('textbox')).toBeNull();
  });

  it('offers no retry while another question runs, and says why', () => {
    render(
      <QueryClientProvider client={new QueryClient()}>
        <RunView replies={replies} run={fromHistory(answered)} onResend={vi.fn()} resendBlocked="Another question is still running." />
      </QueryClientProvider>,
    );
    const retry = screen.getByRole('button', { name: /Retry/ }) as HTMLButtonElement;
    expect(retry.disabled).toBe(true);
    expect(retry.title).toBe('Another question is still running.');
  });

  it('says when a file it used has changed since', () => {
    show(fromHistory(answered), false, false);
    expect(screen.queryByTestId('files-changed')).toBeNull();
    render(
      <QueryClientProvider client={new QueryClient()}>
        <RunView replies={replies} run={fromHistory(answered)} changed={[{ name: 'sales.csv', from: 1, to: 2 }]} />
      </QueryClientProvider>,
    );
    expect(screen.getByTestId('files-changed').textContent).toBe('sales.csv changed since this answer (v1 → v2)');
  });

  it('summarises steps, errors left and plans', () => {
    const run = fromHistory({ ...stored, status: 'failed', steps: [step(1, 'x', 'boom')], started_at: null });
    expect(stepsSummary(run)).toBe('1 step · 1 error · 2 plans');
  });

  it('calls an error fixed only when a later step worked', () => {
    const failing = Array.from({ length: 12 }, (_, i) => step(i + 1, 'x', 'boom'));
    const failed = fromHistory({ ...stored, status: 'failed', steps: failing, plans: [], verifications: [], started_at: null });
    expect(stepsSummary(failed)).toBe('12 steps · 12 errors');
    const mixed = [step(1, 'x', 'boom'), step(2, 'y'), step(3, 'z', 'boom')];
    const late = fromHistory({ ...stored, status: 'failed', steps: mixed, plans: [], verifications: [], started_at: null });
    expect(stepsSummary(late)).toBe('3 steps · 1 fixed error · 1 error');
  });

  it('counts a rejected step neither as an error nor as one that fixed an earlier error', () => {
    const steps = [step(1, 'x', 'boom'), step(2, 'rm -rf', 'Rejected by the user: no.'), step(3, 'z', 'boom')];
    const approvals = [{ step: 2, decision: 'reject' as const, code: null, feedback: 'no.' }];
    const run = fromHistory({ ...stored, status: 'failed', steps, approvals, plans: [], verifications: [], started_at: null });
    expect(stepsSummary(run)).toBe('3 steps · 2 errors · 1 rejected');
  });

  it('says a stopped run was stopped, not that it erred', () => {
    const steps = [step(1, 'x', 'boom'), step(2, 'y'), step(3, 'import time', 'Stopped by the user.')];
    const run = fromHistory({ ...stored, status: 'cancelled', final_answer: null, error: 'Stopped by the user.', steps, plans: [], verifications: [], started_at: null });
    expect(stepsSummary(run)).toBe('3 steps · 1 fixed error · stopped');
  });
});

describe('a run while it goes', () => {
  const started = runStarted(R, 1);

  it('says the sandbox is starting (or restoring) in place of "Thinking…", until the next event', () => {
    const { rerender } = show(reduceRunEvents(emptyRun(R, 'Q'), [started, { event: 'sandbox.starting', run_id: R, seq: 2, restoring: false }]), true);
    expect(screen.getByTestId('sandbox-starting').textContent).toBe('Starting the sandbox…');
    expect(screen.queryByText('Thinking…')).toBeNull();
    const view = (run: RunViewModel) => (
      <QueryClientProvider client={new QueryClient()}>
        <RunView replies={replies} run={run} live />
      </QueryClientProvider>
    );
    rerender(view(reduceRunEvents(emptyRun(R, 'Q'), [started, { event: 'sandbox.starting', run_id: R, seq: 2, restoring: true }])));
    expect(screen.getByTestId('sandbox-starting').textContent).toBe('Starting the sandbox and restoring your variables…');
    rerender(
      view(
        reduceRunEvents(emptyRun(R, 'Q'), [
          started,
          { event: 'sandbox.starting', run_id: R, seq: 2, restoring: true },
          { event: 'model.delta', run_id: R, seq: 3, step: 1, text: 'Thought: ' },
        ]),
      ),
    );
    expect(screen.queryByTestId('sandbox-starting')).toBeNull();
  });

  it('shows the running step open and folds the finished ones', () => {
    show(
      reduceRunEvents(emptyRun(R, 'Q'), [
        started,
        { event: 'step.code', run_id: R, seq: 2, step: 1, code: 'print(1)' },
        { event: 'step.finished', run_id: R, seq: 3, step: 1, duration_ms: 5, tokens_in: 1, tokens_out: 1 },
        { event: 'step.code', run_id: R, seq: 4, step: 2, code: 'print(2)' },
      ]),
      true,
    );
    expect(screen.queryByTestId('steps-toggle')).toBeNull();
    expect(screen.getAllByTestId('step-card').map((c) => c.getAttribute('data-open'))).toEqual(['false', 'true']);
  });
});

describe('keepLineBreaks', () => {
  it('keeps single line breaks and leaves paragraphs and lists alone', () => {
    expect(keepLineBreaks('Established: 1.\nRemaining:\n\n1. a\n2. b')).toBe('Established: 1.  \nRemaining:\n\n1. a  \n2. b');
  });
});

describe('previewLine', () => {
  it('shows the first line of a folded plan without Markdown marks', () => {
    expect(previewLine('\n## Plan\n1. Read')).toBe('Plan');
    expect(previewLine('1. Read `sales.csv`, **all** of `unit_price`.')).toBe('1. Read sales.csv, all of unit_price.');
  });
});

describe('token counts', () => {
  it('marks counts the model server did not report as estimated (≈), live and from history', () => {
    const exact = fromHistory({ ...stored, status: 'succeeded', tokens_in: 1200, tokens_out: 80 });
    show(exact);
    expect(screen.getByTestId('run-tokens').textContent).toBe('1,200 in · 80 out tokens');
    document.body.innerHTML = '';

    show(fromHistory({ ...stored, status: 'succeeded', tokens_in: 1200, tokens_out: 80, tokens_estimated: true }));
    const estimated = screen.getByTestId('run-tokens');
    expect(estimated.textContent).toBe('≈ 1,200 in · 80 out tokens');
    expect(estimated.getAttribute('title')).toMatch(/did not report/);
    document.body.innerHTML = '';

    const live = reduceRunEvents(emptyRun(R, 'q'), [
      runStarted(R, 1, { query: 'q', model: 'm' }),
      { event: 'run.finished', run_id: R, seq: 2, status: 'cancelled', error: 'Stopped by the user.', tokens_in: 900, tokens_out: 40, tokens_estimated: true, cost_usd: null, duration_ms: 5 },
    ] as Parameters<typeof reduceRunEvents>[1]);
    show(live);
    expect(screen.getByTestId('run-tokens').textContent).toBe('≈ 900 in · 40 out tokens');
  });
});

describe('who asked', () => {
  const asked = (over: Partial<RunOut>) => ({ ...stored, ...over });

  it('names the member who asked, or "you", beside the time asked', () => {
    const anas = asked({ created_at: '2026-03-01T10:00:00Z', asked_by: { user_id: 'ana', email: 'ana@example.com' } });
    expect(askedOf(anas, 'bob')).toEqual({ by: 'ana@example.com', at: '2026-03-01T10:00:00Z' });
    expect(askedOf(anas, 'ana')).toEqual({ by: 'you', at: '2026-03-01T10:00:00Z' });
    // Asked before projects had members (or by a user since deleted): the time alone.
    expect(askedOf(asked({ asked_by: null }), 'ana').by).toBeNull();
    // Not in the history yet: the question this tab just sent.
    expect(askedOf(null, 'ana')).toEqual({ by: 'you', at: null });

    render(
      <QueryClientProvider client={new QueryClient()}>
        <RunView run={fromHistory(anas)} replies={replies} asked={askedOf(anas, 'bob')} />
      </QueryClientProvider>,
    );
    const line = screen.getByTestId('run-asked');
    expect(within(line).getByTestId('run-asked-by').textContent).toBe('ana@example.com');
    expect(line.querySelector('time')!.getAttribute('dateTime')).toBe('2026-03-01T10:00:00Z');
  });

  it('says "You" for one\'s own question', () => {
    const mine = asked({ asked_by: { user_id: 'ana', email: 'ana@example.com' } });
    render(
      <QueryClientProvider client={new QueryClient()}>
        <RunView run={fromHistory(mine)} replies={replies} asked={askedOf(mine, 'ana')} />
      </QueryClientProvider>,
    );
    expect(screen.getByTestId('run-asked-by').textContent).toBe('You');
  });
});
