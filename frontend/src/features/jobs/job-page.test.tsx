import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '@/lib/api';
import { ProjectRoleProvider, type Role } from '@/features/projects/role';
import { decideRepair, getJob, listJobRuns, startJobRun, updateJob } from './api';
import { JobPage } from './job-page';
import type { Job, JobRun, Repair } from './types';

vi.mock('./api', () => ({
  listJobs: vi.fn(),
  createJob: vi.fn(),
  getJob: vi.fn(),
  updateJob: vi.fn(),
  deleteJob: vi.fn(),
  startJobRun: vi.fn(),
  listJobRuns: vi.fn(),
  getJobRun: vi.fn(),
  getJobCode: vi.fn(),
  exportJob: vi.fn(),
  decideRepair: vi.fn(),
}));

const job = (over: Partial<Job> = {}): Job => ({
  id: 'j1',
  project_id: 'p',
  name: 'Weekly revenue',
  params: [],
  results: [
    { name: 'answer_1', kind: 'value' },
    { name: 'by_region', kind: 'table' },
  ],
  schedule: { cron: '0 8 * * 1', timezone: 'Europe/Paris' },
  paused: false,
  autonomy: 'review',
  alerts: [],
  next_run_at: new Date(Date.now() + 3 * 86_400_000).toISOString(),
  last_run: null,
  checks: { status: 'ready', note: null },
  source_session_id: 's1',
  created_by: null,
  created_at: '2026-11-01T00:00:00Z',
  ...over,
});

const run = (over: Partial<JobRun> = {}): JobRun => ({
  id: 'r2',
  job_id: 'j1',
  run_id: null,
  trigger: 'manual',
  status: 'succeeded',
  skipped_reason: null,
  error: null,
  params: {},
  results: { answer_1: 52000, by_region: { columns: ['region', 'revenue'], rows: [['North', 30000], ['South', 22000]], row_count: 2 } },
  change: { answer_1: { before: 48210, after: 52000, pct: 7.86, changed: true } },
  checks: [
    { name: 'test_revenue_has_no_missing_values', passed: true, message: '' },
    { name: 'test_each_region_once', passed: false, message: 'by_region lists a region twice' },
  ],
  deliveries: [{ channel: 'email', status: 'sent', attempts: 1 }],
  created_at: '2026-11-02T08:00:00Z',
  started_at: '2026-11-02T08:00:00Z',
  finished_at: '2026-11-02T08:00:02Z',
  ...over,
});

const repair: Repair = {
  id: 'rp1',
  status: 'proposed',
  reason: "The column 'revenue' is now 'amount'.",
  diff: "--- a/job.py\n+++ b/job.py\n@@ -1 +1 @@\n-total = sales['revenue'].sum()\n+total = sales['amount'].sum()",
  checks: [{ name: 'test_sales_has_the_columns_the_job_reads', passed: true, message: '' }],
  proposed_at: '2026-11-02T08:01:00Z',
  decided_by_name: null,
  decided_at: null,
};

function show(role: Role, j: Job, runs: JobRun[] = [run()]) {
  vi.mocked(getJob).mockResolvedValue(j);
  vi.mocked(listJobRuns).mockResolvedValue(runs);
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={qc}>
      <MemoryRouter>
        <ProjectRoleProvider value={role}>
          <JobPage projectId="p" jobId="j1" projectName="Sales" />
        </ProjectRoleProvider>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

beforeEach(() => vi.clearAllMocks());

describe('a job page', () => {
  it('shows the schedule in words, and a run with its values, change and checks', async () => {
    show('editor', job());
    expect((await screen.findByTestId('job-schedule')).textContent).toContain('Every Monday at 08:00 Europe/Paris');
    const history = await screen.findByTestId('job-history');
    const value = within(history).getAllByTestId('run-result')[0];
    expect((value).textContent).toContain('answer_1');
    expect((within(value).getByTestId('result-value')).textContent).toContain('52,000');
    expect((within(value).getByTestId('result-change')).textContent).toContain('48,210 → 52,000');
    expect((within(value).getByTestId('result-pct')).textContent).toContain('+7.9%');
    expect((within(value).getByTestId('result-change')).getAttribute('data-direction')).toBe('up');
    // The table result as a small table.
    expect(within(history).getByText('North')).toBeTruthy();
    expect((within(history).getByTestId('run-checks')).textContent).toContain('Checks: 1 of 2 passed');
    expect((within(history).getByTestId('run-checks')).textContent).toContain('by_region lists a region twice');
    expect((within(history).getByTestId('run-deliveries')).textContent).toContain('email · sent');
  });

  it('gives editors Run now, Pause and Delete; Run now posts a run', async () => {
    vi.mocked(startJobRun).mockResolvedValue(run({ id: 'r3', status: 'queued' }));
    show('editor', job());
    fireEvent.click(await screen.findByRole('button', { name: /Run now/ }));
    await waitFor(() => expect(startJobRun).toHaveBeenCalledWith('j1', undefined));
    expect(screen.getByRole('button', { name: /Pause/ })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Delete the job' })).toBeTruthy();
  });

  it('asks for the parameters, defaults filled in, when the job has some', async () => {
    vi.mocked(startJobRun).mockResolvedValue(run({ id: 'r3', status: 'queued' }));
    show('editor', job({ params: [{ name: 'sales_data_csv', kind: 'file', default: 'sales.csv' }, { name: 'threshold', kind: 'value', default: 10 }] }));
    fireEvent.click(await screen.findByRole('button', { name: /Run now/ }));
    const dialog = await screen.findByTestId('run-params');
    expect(((within(dialog).getByLabelText(/sales_data_csv/)) as HTMLInputElement).value).toBe('sales.csv');
    fireEvent.change(within(dialog).getByLabelText(/threshold/), { target: { value: '12' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Run' }));
    await waitFor(() => expect(startJobRun).toHaveBeenCalledWith('j1', { sales_data_csv: 'sales.csv', threshold: 12 }));
  });

  it('shows viewers everything but no buttons', async () => {
    show('viewer', job({ pending_repair: repair }));
    await screen.findByTestId('job-history');
    expect(screen.queryByRole('button', { name: /^Run now$/ })).toBeNull();
    expect(screen.queryByRole('button', { name: /Pause/ })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Delete the job' })).toBeNull();
    expect((screen.getByTestId('repair-banner')).textContent).toContain("The column 'revenue' is now 'amount'.");
    expect(screen.queryByRole('button', { name: /Approve/ })).toBeNull();
    fireEvent.click(screen.getByRole('tab', { name: 'Alerts' }));
    expect(screen.queryByRole('button', { name: /Add an alert/ })).toBeNull();
  });

  it('shows a repair waiting with its diff coloured, and Approve sends the decision', async () => {
    vi.mocked(decideRepair).mockResolvedValue({ ...repair, status: 'applied', job_run_id: 'r1', created_at: '2026-11-02T08:00:30Z' });
    show('editor', job({ pending_repair: repair }));
    const banner = await screen.findByTestId('repair-banner');
    const diff = within(banner).getByTestId('repair-diff');
    const added = within(diff).getByText("+total = sales['amount'].sum()");
    const removed = within(diff).getByText("-total = sales['revenue'].sum()");
    expect(added.className).toContain('emerald');
    expect(removed.className).toContain('destructive');
    fireEvent.click(within(banner).getByRole('button', { name: /Approve/ }));
    await waitFor(() => expect(decideRepair).toHaveBeenCalledWith('j1', 'rp1', 'approve'));
  });

  it('says a repair is being made while its run\'s repair is `repairing`, and asks for the job again once it is proposed', async () => {
    const failed = run({ id: 'r3', status: 'failed', error: "sales data.csv lacks the columns ['revenue']", repair: { ...repair, status: 'repairing', diff: '', checks: [] } });
    show('editor', job(), [failed]);
    const making = await screen.findByTestId('repair-repairing');
    expect(making.textContent).toContain("The agent is repairing this job's code");
    expect(making.textContent).toContain("The column 'revenue' is now 'amount'.");
    expect(screen.queryByRole('button', { name: /Approve/ })).toBeNull();
    expect(screen.getByTestId('repair-outcome').textContent).toContain('Repairing…');
    // The repair is proposed: the job (now with its pending repair) is asked again.
    const asked = vi.mocked(getJob).mock.calls.length;
    vi.mocked(getJob).mockResolvedValue(job({ pending_repair: repair }));
    vi.mocked(listJobRuns).mockResolvedValue([{ ...failed, repair }]);
    const banner = await screen.findByTestId('repair-banner', {}, { timeout: 5000 });
    expect(vi.mocked(getJob).mock.calls.length).toBeGreaterThan(asked);
    expect(within(banner).getByRole('button', { name: /Approve/ })).toBeTruthy();
    expect(screen.queryByTestId('repair-repairing')).toBeNull();
  });

  it('says why an approval was refused: the code changed since (repair_stale), or decided already (repair_not_pending)', async () => {
    vi.mocked(decideRepair).mockRejectedValueOnce(new ApiError(409, "The job's code or tests changed since this repair was proposed; run the job again for a new one.", 'repair_stale'));
    show('editor', job({ pending_repair: repair }));
    const banner = await screen.findByTestId('repair-banner');
    fireEvent.click(within(banner).getByRole('button', { name: /Approve/ }));
    expect((await within(banner).findByRole('alert')).textContent).toContain("The job's code changed since this repair was proposed, so it cannot be applied any more.");
    vi.mocked(decideRepair).mockRejectedValueOnce(new ApiError(409, 'This repair is applied, not waiting for a decision.', 'repair_not_pending'));
    fireEvent.click(within(banner).getByRole('button', { name: /Reject/ }));
    expect((await within(banner).findByRole('alert')).textContent).toContain('This repair is no longer waiting for a decision: someone decided first');
  });

  it('renders nothing about repairs when the fields are absent, and a run\'s repair outcome with who approved it', async () => {
    show('editor', job(), [run({ repair: { ...repair, status: 'applied', decided_by_name: 'Ada', decided_at: '2026-11-02T09:00:00Z' } }), run({ id: 'r1' })]);
    await screen.findByTestId('job-history');
    expect(screen.queryByTestId('repair-banner')).toBeNull();
    const outcomes = screen.getAllByTestId('repair-outcome');
    expect(outcomes).toHaveLength(1);
    expect((outcomes[0]).textContent).toContain('Repair applied');
    expect((outcomes[0]).textContent).toContain('by Ada');
  });

  it('shows the server\'s reason inline when a schedule is refused', async () => {
    vi.mocked(updateJob).mockRejectedValue(new ApiError(422, 'A schedule runs at most every five minutes; this one every 1.', 'invalid_schedule'));
    show('editor', job());
    fireEvent.click(await screen.findByRole('tab', { name: 'Schedule' }));
    fireEvent.click(screen.getByRole('radio', { name: 'Every N minutes' }));
    fireEvent.change(screen.getByLabelText(/Every \(minutes/), { target: { value: '1' } });
    fireEvent.click(screen.getByRole('button', { name: /Save schedule/ }));
    await waitFor(() => expect(updateJob).toHaveBeenCalled());
    expect((await screen.findByRole('alert')).textContent).toContain('A schedule runs at most every five minutes; this one every 1.');
    expect(updateJob).toHaveBeenCalledWith('j1', { schedule: { every_minutes: 1, timezone: expect.any(String) } });
  });

  it('adds a % change alert to the ones there are, and lists it', async () => {
    const existing = { when: 'failed' as const, deliver: [{ channel: 'share' as const }] };
    const added = { when: 'change_pct' as const, result: 'answer_1', value: -10, deliver: [{ channel: 'email' as const, to: ['team@example.com'] }] };
    vi.mocked(updateJob).mockResolvedValue(job({ alerts: [existing, added] }));
    show('editor', job({ alerts: [existing] }));
    fireEvent.click(await screen.findByRole('tab', { name: 'Alerts' }));
    fireEvent.click(screen.getByRole('button', { name: /Add an alert/ }));
    const form = screen.getByTestId('alert-form');
    fireEvent.change(within(form).getByLabelText(/Change in %/), { target: { value: '-10' } });
    fireEvent.click(within(form).getByRole('button', { name: /Save alert/ }));
    expect((await within(form).findByRole('alert')).textContent).toContain('Choose where the alert goes');
    expect(updateJob).not.toHaveBeenCalled();
    fireEvent.change(within(form).getByLabelText(/Email/), { target: { value: 'team@example.com' } });
    fireEvent.click(within(form).getByRole('button', { name: /Save alert/ }));
    await waitFor(() => expect(updateJob).toHaveBeenCalledWith('j1', { alerts: [existing, added] }));
    const list = await screen.findByTestId('alert-list');
    await waitFor(() => expect(within(list).getAllByTestId('alert')).toHaveLength(2));
    expect((list).textContent).toContain('When answer_1 falls by 10% or more');
  });

  it('clears a schedule, removes an alert and switches repairs to automatic, each as one PATCH', async () => {
    const alert = { when: 'failed' as const, deliver: [{ channel: 'share' as const }] };
    vi.mocked(updateJob).mockImplementation(async (_id, body) => job({ ...body, alerts: body.alerts ?? [alert], schedule: body.schedule === undefined ? job().schedule : body.schedule } as Partial<Job>));
    show('editor', job({ alerts: [alert] }));
    fireEvent.click(await screen.findByRole('tab', { name: 'Schedule' }));
    fireEvent.click(screen.getByRole('button', { name: /Clear: on demand only/ }));
    await waitFor(() => expect(updateJob).toHaveBeenCalledWith('j1', { schedule: null }));
    await waitFor(() => expect(screen.getByTestId('schedule-now').textContent).toBe('On demand'));
    fireEvent.click(screen.getByRole('tab', { name: 'Alerts' }));
    fireEvent.click(screen.getByRole('button', { name: 'Remove the alert: the run fails' }));
    await waitFor(() => expect(updateJob).toHaveBeenCalledWith('j1', { alerts: [] }));
    fireEvent.click(screen.getByRole('tab', { name: 'Repairs' }));
    fireEvent.click(screen.getByRole('switch'));
    await waitFor(() => expect(updateJob).toHaveBeenCalledWith('j1', { autonomy: 'auto' }));
  });
});
