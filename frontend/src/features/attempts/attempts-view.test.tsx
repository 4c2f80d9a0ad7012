import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import type { RunOut } from '@/client';
import { replyActions } from '@/features/runs/mutations';
import { emptyRun, fromHistory, reduceRunEvents, type RunView as RunViewModel } from '@/features/runs/run-reducer';
import { RunView } from '@/features/runs/run-view';
import { authFetch } from '@/lib/api';
import { agreeing, cancelled, majority, oneFailed, repaired, repairWaits, RUN, sseResponse } from '@/test/attempts';
import { storedRun } from '@/test/runs';
import type { AttemptOut, VerdictOut } from './types';
import { VerdictBanner } from './verdict';

vi.mock('@/lib/api', async (original) => ({
  ...(await original<typeof import('@/lib/api')>()),
  authFetch: vi.fn(),
}));

const replies = replyActions(() => undefined);
const reduce = (events: typeof agreeing) => reduceRunEvents(emptyRun(RUN), events);

function show(run: RunViewModel, live = false) {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const onStop = vi.fn();
  const result = render(
    <QueryClientProvider client={qc}>
      <RunView replies={replies} run={run} live={live} onStop={onStop} />
    </QueryClientProvider>,
  );
  return { ...result, onStop };
}

const lanes = () => screen.queryAllByTestId('attempt-lane');

describe('VerdictBanner', () => {
  const base = reduce(majority).attempts;
  const banner = (v: VerdictOut) => {
    render(<VerdictBanner verdict={v} lanes={base} />);
    return screen.getByTestId('verdict');
  };

  it('says "3 of 3 attempts agree" in green', () => {
    const el = banner({ agreement: '3/3', outcome: 'agree', chosen: 1, groups: [{ answer: '4650', attempts: [1, 2, 3] }], reason: 'All three computed 4,650.' });
    expect(el.textContent).toBe('Agree: 3 of 3 attempts agree — All three computed 4,650.');
    expect(el.getAttribute('data-outcome')).toBe('agree');
    expect(el.className).toContain('emerald');
    expect(within(el).queryByTestId('verdict-dissent')).toBeNull();
  });

  it('does not say the count twice when the reason begins with it, as the server words it', () => {
    const agreed = banner({ agreement: '3/3', outcome: 'agree', chosen: 1, groups: [{ answer: '42', attempts: [1, 2, 3] }], reason: '3 of 3 attempts agree.' });
    expect(agreed.textContent).toBe('Agree: 3 of 3 attempts agree');
  });

  it("gives a split's reason from the dissent on, as the server words it", () => {
    const split = banner({
      agreement: '2/3',
      outcome: 'majority',
      chosen: 1,
      groups: [
        { answer: '4490.75', attempts: [1, 2] },
        { answer: '4812', attempts: [3] },
      ],
      reason: '2 of 3 agree — attempt 3 (cross-check) found 4,812 because it kept refunded orders.',
    });
    expect(within(split).getByTestId('verdict-reason').textContent).toBe(' — attempt 3 (cross-check) found 4,812 because it kept refunded orders.');
  });

  it('says "2 of 3 agree" in amber, with the reason naming the dissent and its answer', () => {
    const el = banner({
      agreement: '2/3',
      outcome: 'majority',
      chosen: 1,
      groups: [
        { answer: '4650', attempts: [1, 2] },
        { answer: '4812', attempts: [3] },
      ],
      reason: 'attempt 3 found 4,812 because it kept refunded orders',
    });
    expect(within(el).getByTestId('verdict-headline').textContent).toBe('2 of 3 agree');
    expect(within(el).getByTestId('verdict-reason').textContent).toBe(' — attempt 3 found 4,812 because it kept refunded orders');
    expect(within(el).getByTestId('verdict-dissent').textContent).toBe('attempt 3 (a second way, compared): 4812');
    expect(el.textContent).toContain("The answer below is attempt 1's (pandas).");
    expect(el.className).toContain('amber');
  });

  it('names the judge’s choice and its reason when no group had a majority', () => {
    const el = banner({
      agreement: '1/3',
      outcome: 'judged',
      chosen: 2,
      groups: [
        { answer: '4650', attempts: [1] },
        { answer: '4700', attempts: [2] },
        { answer: '4812', attempts: [3] },
      ],
      reason: 'Attempt 2 is the only one that excluded the test orders, as the question asks.',
    });
    expect(within(el).getByTestId('verdict-headline').textContent).toBe('The attempts disagreed: the judge chose attempt 2');
    expect(el.textContent).toContain('excluded the test orders');
    expect(within(el).getByTestId('verdict-dissent').textContent).toBe('attempt 1 (pandas): 4650attempt 3 (a second way, compared): 4812');
  });

  it('says it could not tell, with the reasons and every answer', () => {
    const el = banner({
      agreement: '1/3',
      outcome: 'undecided',
      chosen: null,
      groups: [
        { answer: '4650', attempts: [1] },
        { answer: '4700', attempts: [2] },
        { answer: '12', attempts: [3] },
      ],
      reason: 'The attempts read different months and the question does not say which.',
    });
    expect(el.getAttribute('data-outcome')).toBe('undecided');
    expect(within(el).getByTestId('verdict-headline').textContent).toBe('Could not tell which answer is right');
    expect(el.textContent).toContain('read different months');
    expect(within(el).getByTestId('verdict-dissent').textContent).toBe('attempt 1 (pandas): 4650attempt 2 (SQL (DuckDB)): 4700attempt 3 (a second way, compared): 12');
    expect(el.className).toContain('destructive');
  });
});

describe('RunView with attempts', () => {
  it('shows the attempts as lanes while they run, each with its strategy, model, status and steps; one Stop', () => {
    const cut = agreeing.findIndex((e) => e.event === ('attempt.finished' as string)) + 1;
    const { onStop } = show(reduce(agreeing.slice(0, cut)), true);
    expect(lanes().map((l) => [l.getAttribute('data-attempt'), l.getAttribute('data-status')])).toEqual([
      ['1', 'succeeded'],
      ['2', 'running'],
      ['3', 'running'],
    ]);
    const [one, two] = lanes();
    expect(within(one).getByTestId('attempt-title').textContent).toBe('Attempt 1 · pandas');
    expect(one.textContent).toContain('openai/scripted');
    expect(within(one).getByText('Answered')).toBeTruthy();
    expect(within(two).getByText('Running')).toBeTruthy();
    // A finished step folds to its header in its lane, as in a run.
    expect(within(two).getByTestId('step-card').getAttribute('data-open')).toBe('false');
    expect(within(one).getByTestId('attempt-answer').textContent).toContain('Revenue in March was 4,650.');
    expect(screen.queryByTestId('verdict')).toBeNull();
    // Narrow screens: the same attempts as tabs.
    expect(screen.getAllByRole('tab').map((t) => t.textContent)).toEqual(['Attempt 1 · pandas', 'Attempt 2 · SQL (DuckDB)', 'Attempt 3 · a second way, compared']);
    const stops = screen.getAllByRole('button', { name: /Stop/ });
    expect(stops).toHaveLength(1);
    fireEvent.click(stops[0]);
    expect(onStop).toHaveBeenCalledTimes(1);
  });

  it('streams each lane’s own step: its code as it comes', () => {
    const cut = agreeing.findIndex((e) => e.event === 'step.code' && (e as { attempt?: number }).attempt === 2) + 1;
    show(reduce(agreeing.slice(0, cut)), true);
    expect(lanes().map((l) => l.getAttribute('data-status'))).toEqual(['running', 'running', 'running']);
    const [one, two, three] = lanes();
    expect(within(one).getByTestId('code').textContent).toContain("pd.read_csv('orders.csv')");
    expect(within(two).getByTestId('code').textContent).toContain('duckdb.sql');
    expect(within(two).queryByText(/pd.read_csv/)).toBeNull();
    expect(within(three).getByTestId('step-card').getAttribute('data-open')).toBe('true');
    expect(within(three).queryByTestId('code')).toBeNull();
  });

  it('after: the verdict above the chosen answer, each attempt’s answer and code one click away', () => {
    const { container } = show(reduce(agreeing), true);
    expect(lanes()).toHaveLength(0);
    const verdict = screen.getByTestId('verdict');
    const answer = screen.getByTestId('final-answer');
    expect(verdict.compareDocumentPosition(answer) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(within(verdict).getByTestId('verdict-headline').textContent).toBe('3 of 3 attempts agree');
    expect(answer.textContent).toContain('Revenue in March was 4,650.');
    const toggles = screen.getAllByTestId('attempt-toggle');
    expect(toggles.map((t) => t.textContent)).toEqual(['Attempt 1 · pandas', 'Attempt 2 · SQL (DuckDB)', 'Attempt 3 · a second way, compared']);
    expect(within(toggles[0]).getByLabelText('chosen')).toBeTruthy();
    expect(screen.queryByTestId('attempt-panel')).toBeNull();
    fireEvent.click(toggles[1]);
    const panel = screen.getByTestId('attempt-panel');
    expect(panel.getAttribute('data-attempt')).toBe('2');
    expect(within(panel).getByTestId('attempt-answer').textContent).toContain('March revenue: 4,650');
    expect(within(panel).getByTestId('code').textContent).toContain('duckdb.sql');
    expect(within(panel).getByTestId('step-output').textContent).toBe('4650\n');
    fireEvent.click(toggles[1]);
    expect(screen.queryByTestId('attempt-panel')).toBeNull();
    expect(container.querySelector('[data-testid=steps-toggle]')).toBeNull();
  });

  it('a split: the verdict names the dissent; the dissenting attempt’s answer opens from its button', () => {
    show(reduce(majority));
    expect(screen.getByTestId('verdict').textContent).toContain('2 of 3 agree — attempt 3 found 4,812 because it kept refunded orders');
    expect(screen.getByTestId('final-answer').textContent).toContain('4,650');
    fireEvent.click(screen.getAllByTestId('attempt-toggle')[2]);
    expect(within(screen.getByTestId('attempt-panel')).getByTestId('attempt-answer').textContent).toContain('It was 4,812 in March.');
  });

  it('a failed attempt: marked on its button, its errors and its repair in its panel', () => {
    show(reduce(oneFailed));
    const toggle = screen.getAllByTestId('attempt-toggle')[1];
    expect(toggle.textContent).toBe('Attempt 2 · SQL (DuckDB)(failed)');
    fireEvent.click(toggle);
    const panel = screen.getByTestId('attempt-panel');
    expect(within(panel).getByText('Failed')).toBeTruthy();
    expect(within(panel).getByTestId('repair').textContent).toContain('Repair: 3 strategies, no strategy worked');
    expect(within(panel).getAllByTestId('step-error')).toHaveLength(2);
    expect(within(panel).queryByTestId('attempt-answer')).toBeNull();
  });

  it('a cancelled run: stopped before an answer, each attempt as far as it got', () => {
    show(reduce(cancelled));
    expect(screen.getByTestId('run-result').textContent).toContain('Stopped before an answer.');
    expect(screen.queryByTestId('verdict')).toBeNull();
    expect(screen.getAllByTestId('attempt-toggle').map((t) => t.textContent)).toEqual([
      'Attempt 1 · pandas',
      'Attempt 2 · SQL (DuckDB)(stopped)',
      'Attempt 3 · a second way, compared(stopped)',
    ]);
  });

  it('after a reload: the verdict from GET run, the attempts’ steps from the stored events', async () => {
    const attempts: AttemptOut[] = reduce(agreeing).attempts.map((l) => ({
      attempt: l.attempt,
      strategy: l.strategy,
      model: l.model ?? '',
      status: l.status,
      answer: l.answer,
      tokens_in: 300,
      tokens_out: 60,
      cost_usd: 0.0004,
    }));
    const stored = storedRun({ id: RUN, final_answer: 'Revenue in March was 4,650.', ...{ attempts, verdict: reduce(agreeing).verdict } } as Partial<RunOut>);
    vi.mocked(authFetch).mockResolvedValue(sseResponse(agreeing));
    show(fromHistory(stored));
    expect(screen.getByTestId('verdict-headline').textContent).toBe('3 of 3 attempts agree');
    expect(screen.getByTestId('final-answer').textContent).toContain('Revenue in March was 4,650.');
    expect(authFetch).not.toHaveBeenCalled();
    fireEvent.click(screen.getAllByTestId('attempt-toggle')[1]);
    const panel = screen.getByTestId('attempt-panel');
    expect(panel.textContent).toContain('300 in · 60 out tokens');
    await waitFor(() => expect(within(panel).getByTestId('code').textContent).toContain('duckdb.sql'));
    expect(vi.mocked(authFetch).mock.calls[0][0]).toBe(`/api/v1/runs/${RUN}/events?after=0`);
  });

  it('a single-attempt question looks as before: no lanes, verdict or attempts', () => {
    show(reduce(repaired));
    expect(screen.queryByTestId('verdict')).toBeNull();
    expect(screen.queryByTestId('attempts')).toBeNull();
    expect(screen.queryByTestId('attempt-lanes')).toBeNull();
    expect(screen.getByTestId('final-answer').textContent).toContain('Revenue in March was 4,650.');
  });
});

describe('RunView: an attempt waiting for approval (review_repairs)', () => {
  it('makes the run wait, shows the attempt’s code for review in its lane, and sends the decision for the run', async () => {
    const v = reduce(repairWaits);
    expect(v.status).toBe('waiting_approval');
    const decide = vi.fn(() => Promise.resolve({} as RunOut));
    const qc = new QueryClient();
    render(
      <QueryClientProvider client={qc}>
        <RunView replies={{ ...replies, decide }} run={v} live />
      </QueryClientProvider>,
    );
    // On a narrow screen the waiting attempt is the tab shown.
    expect(screen.getByRole('tab', { selected: true }).textContent).toBe('Attempt 2 · SQL (DuckDB)');
    const [one, two] = lanes();
    expect(within(one).queryByRole('button', { name: 'Approve' })).toBeNull();
    fireEvent.click(within(two).getByRole('button', { name: 'Approve' }));
    await waitFor(() => expect(decide).toHaveBeenCalledWith(RUN, { decision: 'approve' }));
  });
});

describe('RunView with a parallel repair', () => {
  it('shows "Repair: 3 strategies, #2 continued" after the step it repaired, its strategies on expand', () => {
    show(reduce(repaired), true);
    fireEvent.click(screen.getByTestId('steps-toggle'));
    const steps = screen.getByTestId('run-steps');
    const order = [...steps.querySelectorAll('[data-testid=step-card], [data-testid=repair]')].map((el) =>
      el.getAttribute('data-testid') === 'repair' ? 'repair' : `step ${el.getAttribute('data-step')}`,
    );
    expect(order).toEqual(['step 1', 'step 2', 'repair', 'step 3']);
    const repair = screen.getByTestId('repair');
    expect(repair.textContent).toContain('Repair: 3 strategies, #2 continued');
    expect(within(repair).queryByTestId('repair-strategies')).toBeNull();
    fireEvent.click(within(repair).getByRole('button'));
    const items = within(repair).getAllByRole('listitem').map((li) => li.textContent);
    expect(items).toEqual(['re-read the real columns and types', 'a simpler method — continued the run', 'a different library']);
  });

  it('shows the same repair note after a reload, from the stored run', () => {
    const step = (index: number, error: string | null) =>
      ({ index, thought: null, code: `x = ${index}`, output: null, error, duration_ms: 5, tokens_in: 1, tokens_out: 1, queries: [] }) as RunOut['steps'][number];
    const strategies = ['re-read the real columns and types', 'a simpler method', 'a different library'];
    const run = fromHistory(
      storedRun({
        final_answer: '42',
        steps: [step(1, 'KeyError'), step(2, 'KeyError'), step(3, null)],
        repairs: [{ step: 2, strategies, chosen: 2, reasons: ['its code failed', '', 'the check rejected it'], attempt: null }],
      }),
    );
    show(run);
    fireEvent.click(screen.getByTestId('steps-toggle'));
    const steps = screen.getByTestId('run-steps');
    const order = [...steps.querySelectorAll('[data-testid=step-card], [data-testid=repair]')].map((el) =>
      el.getAttribute('data-testid') === 'repair' ? 'repair' : `step ${el.getAttribute('data-step')}`,
    );
    expect(order).toEqual(['step 1', 'step 2', 'repair', 'step 3']);
    const repair = screen.getByTestId('repair');
    expect(repair.textContent).toContain('Repair: 3 strategies, #2 continued');
    fireEvent.click(within(repair).getByRole('button'));
    expect(within(repair).getAllByRole('listitem').map((li) => li.textContent)).toEqual([
      're-read the real columns and types',
      'a simpler method — continued the run',
      'a different library',
    ]);
  });
});
