import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ProjectRoleProvider, type Role } from '@/features/projects/role';
import { createCheck, getCheckRun, listCheckRuns, listChecks, startCheckRun } from './api';
import { ChecksPage } from './checks-page';
import type { CheckRun, ProjectCheck } from './types';

vi.mock('./api', () => ({
  listChecks: vi.fn(),
  createCheck: vi.fn(),
  updateCheck: vi.fn(),
  deleteCheck: vi.fn(),
  startCheckRun: vi.fn(),
  listCheckRuns: vi.fn(),
  getCheckRun: vi.fn(),
}));
vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  listModels: vi.fn(async () => ({ data: { items: [{ id: 'scripted', label: 'Scripted', default: true }] } })),
}));

const check: ProjectCheck = { id: 'c1', project_id: 'p', question: 'Revenue in March?', expected: { revenue: '1200' }, format: '', from_run_id: null, created_by: null, created_at: '2026-11-01T00:00:00Z', updated_at: '2026-11-01T00:00:00Z' };
const run = (over: Partial<CheckRun>): CheckRun => ({
  id: 'cr',
  project_id: 'p',
  status: 'succeeded',
  model: 'scripted',
  attempts: 1,
  error: null,
  created_by: null,
  created_at: '2026-11-02T10:00:00Z',
  session_id: 's1',
  total: 2,
  passed: 1,
  failed: 1,
  errors: 0,
  accuracy: 0.5,
  tokens_in: 1000,
  tokens_out: 200,
  cost_usd: null,
  started_at: '2026-11-02T10:00:00Z',
  finished_at: '2026-11-02T10:01:00Z',
  ...over,
});

function show(role: Role, runs: CheckRun[]) {
  vi.mocked(listChecks).mockResolvedValue({ items: [check], total: 1 });
  vi.mocked(listCheckRuns).mockResolvedValue({ items: runs, total: runs.length });
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={qc}>
      <MemoryRouter>
        <ProjectRoleProvider value={role}>
          <ChecksPage projectId="p" />
        </ProjectRoleProvider>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

beforeEach(() => vi.clearAllMocks());

describe('ChecksPage', () => {
  it('shows the latest run with each result and the history with the change from the run before', async () => {
    const latest = run({
      id: 'new',
      accuracy: 1,
      passed: 2,
      failed: 0,
      results: [{ check_id: 'c1', position: 0, status: 'passed', run_id: 'r9', answer: 'Revenue was 1,200. @revenue[1200]', question: 'Revenue in March?', expected: { revenue: '1200' }, detail: null }],
    });
    vi.mocked(getCheckRun).mockResolvedValue(latest);
    show('viewer', [latest, run({ id: 'old' })]);
    expect((await screen.findByTestId('check-run-summary')).textContent).toBe('100% · 2 of 2 passed');
    const result = within(screen.getByTestId('check-result'));
    expect(result.getByText('Pass')).toBeTruthy();
    expect(result.getByText('Revenue in March?')).toBeTruthy();
    expect(result.getByRole('link', { name: 'Open its run' }).getAttribute('href')).toBe('/projects/p/sessions/s1#run-r9');
    const rows = screen.getAllByTestId('check-history-row');
    expect(rows[0].textContent).toContain('100%(+50 points)');
    expect(rows[0].textContent).toContain('2/2');
    expect(rows[1].textContent).toContain('50%');
    expect(screen.getByRole('button', { name: /Run checks/ })).toHaveProperty('disabled', true);
  });

  it('shows the progress of a run that is going', async () => {
    vi.mocked(getCheckRun).mockResolvedValue(run({ status: 'running', passed: 1, failed: 0, accuracy: null, finished_at: null }));
    show('editor', [run({ status: 'running' })]);
    expect((await screen.findByTestId('check-run-progress')).textContent).toContain('Checked 1 of 2…');
    expect(screen.getByRole('button', { name: /Run checks/ })).toHaveProperty('disabled', true);
  });

  it('runs the checks on the chosen model', async () => {
    vi.mocked(startCheckRun).mockResolvedValue(run({ id: 'started', status: 'queued' }));
    vi.mocked(getCheckRun).mockResolvedValue(run({ id: 'started', status: 'queued' }));
    show('editor', []);
    await screen.findByText('The checks have not been run yet.');
    await waitFor(() => expect((screen.getByLabelText('Model') as HTMLSelectElement).value).toBe('scripted'));
    fireEvent.click(screen.getByRole('button', { name: /Run checks/ }));
    await waitFor(() => expect(startCheckRun).toHaveBeenCalledWith('p', { model: 'scripted' }));
  });

  it('adds a check from its question and name=value pairs, refusing what is not a pair', async () => {
    vi.mocked(createCheck).mockResolvedValue(check);
    show('editor', []);
    fireEvent.click(await screen.findByRole('button', { name: /Add check/ }));
    const form = within(screen.getByTestId('check-form'));
    fireEvent.change(form.getByLabelText('Question'), { target: { value: 'How many customers?' } });
    fireEvent.change(form.getByLabelText('Expected answer'), { target: { value: 'customers' } });
    fireEvent.click(form.getByRole('button', { name: 'Add check' }));
    expect(form.getByRole('alert').textContent).toBe('“customers” is not a name=value pair.');
    fireEvent.change(form.getByLabelText('Expected answer'), { target: { value: 'customers=42' } });
    fireEvent.click(form.getByRole('button', { name: 'Add check' }));
    await waitFor(() => expect(createCheck).toHaveBeenCalledWith('p', { question: 'How many customers?', expected: { customers: '42' }, format: '' }));
  });
});
