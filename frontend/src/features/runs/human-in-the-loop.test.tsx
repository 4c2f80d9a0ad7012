import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { RunOut } from '@/client';
import { answerRun as answerRequest, approveRun } from '@/client';
import { ApiError } from '@/lib/api';
import { runStarted, storedRun } from '@/test/runs';
import { replyActions } from './mutations';
import { emptyRun, fromHistory, reduceRunEvents } from './run-reducer';
import { RunView, StatusBadge } from './run-view';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  answerRun: vi.fn(),
  approveRun: vi.fn(),
}));

const answerRun = vi.mocked(answerRequest);
const decideRun = vi.mocked(approveRun);
/** What the session's runs do once a reply is taken, or no longer awaited: follow the run. */
const follow = vi.fn<(runId: string) => void>();

const R = 'run-1';
const S = 'session-1';
const WRONG = "df = pd.read_csv('sales.csv')\nprint(df['revenue'].max())";

const step = (index: number, code: string, over: Partial<RunOut['steps'][number]> = {}): RunOut['steps'][number] => ({
  index,
  thought: 'Thought: go.',
  code,
  output: null,
  error: null,
  duration_ms: 10,
  tokens_in: 1,
  tokens_out: 1,
  ...over,
});

const stored = (over: Partial<RunOut>): RunOut =>
  storedRun({ id: R, session_id: S, query: 'Total revenue?', tokens_in: 1, tokens_out: 1, ...over });

function show(run: RunOut | ReturnType<typeof emptyRun>, live = false) {
  const view = 'runId' in run ? run : fromHistory(run);
  const result = render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { mutations: { retry: false } } })}>
      <RunView run={view} live={live} replies={replyActions(follow)} />
    </QueryClientProvider>,
  );
  // A finished run folds its steps under its answer: open them to look at the flow.
  for (const toggle of screen.queryAllByTestId('steps-toggle')) if (toggle.getAttribute('aria-expanded') === 'false') fireEvent.click(toggle);
  return result;
}

const waitingForAnswer = stored({
  status: 'waiting_input',
  steps: [step(1, "kind = ask_user('Net or gross revenue?')")],
  pending: { kind: 'input', step: 1, question: 'Net or gross revenue?', code: null },
});

const waitingForApproval = stored({
  status: 'waiting_approval',
  pending: { kind: 'approval', step: 1, question: null, code: WRONG },
});

const taken = (run: Partial<RunOut> = {}) => ({ data: stored({ status: 'running', ...run }) }) as never;

beforeEach(() => {
  vi.clearAllMocks();
});

describe('StatusBadge', () => {
  it('says what a waiting run waits for, not that it runs', () => {
    render(<StatusBadge status="waiting_input" />);
    expect(screen.getByText('Waiting for your answer')).toBeTruthy();
    render(<StatusBadge status="waiting_approval" />);
    expect(screen.getByText('Waiting for your approval')).toBeTruthy();
    expect(screen.queryByText('Running')).toBeNull();
  });
});

describe('a question the agent asks', () => {
  it('waits under the step that asked, and sends the answer on Enter (Shift+Enter is a new line)', async () => {
    answerRun.mockResolvedValue(taken());
    const { container } = show(waitingForAnswer);
    const question = screen.getByTestId('question');
    expect(question.getAttribute('data-state')).toBe('waiting');
    expect(within(question).getByTestId('question-text').textContent).toBe('Net or gross revenue?');
    expect(within(question).getByTestId('waiting-for-answer').textContent).toContain('Waiting for your answer');
    // Right after the step whose code asked.
    expect(container.querySelector('[data-testid=step-card] + [data-testid=question]')).toBe(question);
    expect(within(screen.getByTestId('run-footer')).getByText('Waiting for your answer')).toBeTruthy();

    const box = within(question).getByRole('textbox', { name: 'Your answer' });
    fireEvent.change(box, { target: { value: '  gross\n' } });
    fireEvent.keyDown(box, { key: 'Enter', shiftKey: true });
    expect(answerRun).not.toHaveBeenCalled();
    fireEvent.keyDown(box, { key: 'Enter' });
    await waitFor(() => expect(answerRun).toHaveBeenCalledWith({ path: { run_id: R }, body: { answer: 'gross' } }));
    // The run goes on in this view: its stream is followed (re-attached if it was gone).
    await waitFor(() => expect(follow).toHaveBeenCalledWith(R));
    expect(within(question).getByRole('button', { name: 'Answer' }).hasAttribute('disabled')).toBe(true);
  });

  it('answered elsewhere (409): follows the run instead of showing an error', async () => {
    answerRun.mockRejectedValue(new ApiError(409, 'This run is not waiting for an answer.', 'not_waiting_input'));
    show(waitingForAnswer);
    fireEvent.change(screen.getByRole('textbox', { name: 'Your answer' }), { target: { value: 'net' } });
    fireEvent.click(screen.getByRole('button', { name: 'Answer' }));
    await waitFor(() => expect(follow).toHaveBeenCalledWith(R));
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('shows any other refusal by the form', async () => {
    answerRun.mockRejectedValue(new ApiError(422, 'String should have at most 20000 characters'));
    show(waitingForAnswer);
    fireEvent.change(screen.getByRole('textbox', { name: 'Your answer' }), { target: { value: 'net' } });
    fireEvent.click(screen.getByRole('button', { name: 'Answer' }));
    expect((await screen.findByRole('alert')).textContent).toBe('String should have at most 20000 characters');
    expect(follow).not.toHaveBeenCalled();
  });

  it('shows question and answer in a finished run, and a question the run ended without', () => {
    show(
      stored({
        steps: [step(1, "kind = ask_user('Net or gross revenue?')"), step(2, "final_answer(f'Total {kind} revenue')")],
        inputs: [{ step: 1, question: 'Net or gross revenue?', answer: 'gross' }],
        final_answer: 'Total gross revenue',
      }),
    );
    const question = screen.getByTestId('question');
    expect(question.getAttribute('data-state')).toBe('answered');
    expect(within(question).getByTestId('question-answer').textContent).toBe('gross');
    expect(within(question).queryByRole('textbox')).toBeNull();

    const ended = reduceRunEvents(emptyRun(R, 'Revenue?'), [
      runStarted(R, 1),
      { event: 'input.requested', run_id: R, seq: 2, step: 1, question: 'Which year?' },
      { event: 'run.finished', run_id: R, seq: 3, status: 'cancelled', error: null, tokens_in: 1, tokens_out: 1, cost_usd: null, duration_ms: 1 },
    ]);
    show(ended);
    const unanswered = screen.getAllByTestId('question')[1];
    expect(unanswered.getAttribute('data-state')).toBe('unanswered');
    expect(within(unanswered).getByText('Not answered: the run ended first.')).toBeTruthy();
  });
});

describe('code waiting for approval', () => {
  it('waits in an editor, and approves as written', async () => {
    decideRun.mockResolvedValue(taken());
    show(waitingForApproval);
    const card = screen.getByTestId('step-card');
    expect(within(card).getByText('waiting for your approval')).toBeTruthy();
    expect(within(card).queryByLabelText('Step running')).toBeNull();
    const editor = within(card).getByRole('textbox', { name: 'Code waiting for approval' }) as HTMLTextAreaElement;
    expect(editor.value).toBe(WRONG);
    expect(within(card).queryByRole('button', { name: /Approve edited code/ })).toBeNull();
    fireEvent.click(within(card).getByRole('button', { name: 'Approve' }));
    await waitFor(() => expect(decideRun).toHaveBeenCalledWith({ path: { run_id: R }, body: { decision: 'approve' } }));
    await waitFor(() => expect(follow).toHaveBeenCalledWith(R));
  });

  it('sends an edit as the code to run, and can discard it', async () => {
    decideRun.mockResolvedValue(taken());
    show(waitingForApproval);
    const editor = screen.getByRole('textbox', { name: 'Code waiting for approval' });
    const edited = WRONG.replace('.max()', '.sum()');
    fireEvent.change(editor, { target: { value: edited } });
    expect(screen.queryByRole('button', { name: 'Approve' })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Discard edits' }));
    expect((editor as HTMLTextAreaElement).value).toBe(WRONG);
    fireEvent.change(editor, { target: { value: edited } });
    // Ctrl+Enter in the editor approves what it holds.
    fireEvent.keyDown(editor, { key: 'Enter', ctrlKey: true });
    await waitFor(() => expect(decideRun).toHaveBeenCalledWith({ path: { run_id: R }, body: { decision: 'edit', code: edited } }));
  });

  it('rejects with optional feedback', async () => {
    decideRun.mockResolvedValue(taken());
    show(waitingForApproval);
    fireEvent.click(screen.getByRole('button', { name: 'Reject…' }));
    fireEvent.change(screen.getByRole('textbox', { name: 'Why reject this code? (optional)' }), { target: { value: ' Use the sum. ' } });
    fireEvent.click(screen.getByRole('button', { name: 'Reject code' }));
    await waitFor(() =>
      expect(decideRun).toHaveBeenCalledWith({ path: { run_id: R }, body: { decision: 'reject', feedback: 'Use the sum.' } }),
    );
  });

  it('decided elsewhere (409): follows the run instead of showing an error', async () => {
    decideRun.mockRejectedValue(new ApiError(409, 'This run is not waiting for approval.', 'not_waiting_approval'));
    show(waitingForApproval);
    fireEvent.click(screen.getByRole('button', { name: 'Approve' }));
    await waitFor(() => expect(follow).toHaveBeenCalledWith(R));
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('shows each decision in its step afterwards: approved, edited, rejected with the feedback', () => {
    const right = WRONG.replace('.max()', '.sum()');
    show(
      stored({
        steps: [
          step(1, WRONG, { error: 'Rejected by the user: Use the sum.', duration_ms: 0 }),
          step(2, right, { output: '4490.75\n' }),
          step(3, 'print(df.shape)', { output: '(4, 2)\n' }),
          step(4, "final_answer('Total revenue is 4490.75.')"),
        ],
        approvals: [
          { step: 1, decision: 'reject', code: null, feedback: 'Use the sum.' },
          { step: 2, decision: 'edit', code: right, feedback: null },
          { step: 3, decision: 'approve', code: null, feedback: null },
        ],
        final_answer: 'Total revenue is 4490.75.',
      }),
    );
    const [rejected, edited, approved, last] = screen.getAllByTestId('step-card');
    expect(within(rejected).getByTestId('approval-decision').textContent).toBe('Rejected: Use the sum.');
    expect(within(rejected).getByText('rejected — the agent tried again in step 2')).toBeTruthy();
    expect(within(rejected).queryByRole('alert')).toBeNull();
    expect(within(edited).getByTestId('approval-decision').textContent).toContain('Edited before running');
    expect(within(edited).getByTestId('code').textContent).toContain('.sum()');
    expect(within(approved).getByTestId('approval-decision').textContent).toBe('Approved');
    expect(within(last).queryByTestId('approval-decision')).toBeNull();
    expect(screen.queryByRole('textbox')).toBeNull();
    expect(screen.queryAllByRole('alert')).toEqual([]);
  });
});
