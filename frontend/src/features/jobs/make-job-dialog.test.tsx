import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { MemoryRouter, Route, Routes } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { listRuns, type SessionOut } from '@/client';
import { ProjectRoleProvider, type Role } from '@/features/projects/role';
import { createJob } from './api';
import { MakeJobButton } from './make-job-dialog';

vi.mock('@/client', async (original) => ({ ...(await original<typeof import('@/client')>()), listRuns: vi.fn() }));
vi.mock('./api', () => ({ createJob: vi.fn() }));

const session: SessionOut = {
  id: 's1',
  project_id: 'p1',
  title: 'Revenue by region',
  autonomy: 'auto',
  recorded: false,
  parent_session_id: null,
  branched_after_run_id: null,
  restored: null,
  file_pins: [],
  tokens_in: 0,
  tokens_out: 0,
  cost_usd: null,
  created_at: '',
  updated_at: '',
};

const runs = [
  { id: 'r1', query: 'What is the total revenue?', status: 'succeeded' },
  { id: 'r2', query: 'Which region earns most?', status: 'succeeded' },
  { id: 'r3', query: 'A failed one', status: 'failed' },
];

function show(role: Role) {
  vi.mocked(listRuns).mockResolvedValue({ data: { items: runs, total: runs.length } } as never);
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <MemoryRouter initialEntries={['/projects/p1/sessions/s1']}>
        <ProjectRoleProvider value={role}>
          <Routes>
            <Route path="/projects/p1/sessions/s1" element={<MakeJobButton session={session} />} />
            <Route path="/projects/p1/jobs/:jobId" element={<p>the job page</p>} />
          </Routes>
        </ProjectRoleProvider>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

beforeEach(() => vi.clearAllMocks());

describe('Make this a job', () => {
  it('takes two clicks for all the answered questions, then opens the job', async () => {
    vi.mocked(createJob).mockResolvedValue({ id: 'j9' } as never);
    show('editor');
    fireEvent.click(screen.getByTestId('make-job'));
    const dialog = await screen.findByTestId('make-job-dialog');
    const boxes = await within(dialog).findAllByRole('checkbox');
    expect(boxes.map((b) => (b as HTMLInputElement).checked)).toEqual([true, true, false]);
    expect((within(dialog).getByLabelText('Name') as HTMLInputElement).value).toBe('Revenue by region');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create job' }));
    await waitFor(() => expect(createJob).toHaveBeenCalledWith('p1', { session_id: 's1', name: 'Revenue by region' }));
    expect(await screen.findByText('the job page')).toBeTruthy();
  });

  it('sends the questions chosen when they are not all the answered ones, and says why it failed', async () => {
    vi.mocked(createJob).mockRejectedValue(new Error('This session has no run that succeeded.'));
    show('owner');
    fireEvent.click(screen.getByTestId('make-job'));
    const dialog = await screen.findByTestId('make-job-dialog');
    const boxes = await within(dialog).findAllByRole('checkbox');
    fireEvent.click(boxes[1]);
    fireEvent.change(within(dialog).getByLabelText('Name'), { target: { value: 'Total only' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create job' }));
    await waitFor(() => expect(createJob).toHaveBeenCalledWith('p1', { session_id: 's1', name: 'Total only', run_ids: ['r1'] }));
    expect((await within(dialog).findByTestId('make-job-error')).textContent).toContain('This session has no run that succeeded.');
  });

  it('is not offered to viewers', () => {
    show('viewer');
    expect(screen.queryByTestId('make-job')).toBeNull();
  });
});
