import { QueryClient, QueryClientProvider, useQuery } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { updateProject, updateSession, type ProjectOut, type SessionOut } from '@/client';
import { fileKeys } from '@/features/files/queries';
import { projectKeys, projectQuery } from '@/features/projects/queries';
import { Composer } from '@/features/runs/composer';
import { AutonomySwitch } from '@/features/sessions/autonomy-switch';
import { systemKeys } from '@/features/system/queries';
import { sandboxStatus } from '@/features/system/sandbox-status.fixture';
import { DefaultAttempts } from './default-attempts';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  updateProject: vi.fn(),
  updateSession: vi.fn(),
}));

const project = (default_attempts?: number): ProjectOut =>
  ({
    id: 'p',
    role: 'owner',
    name: 'Sales',
    description: '',
    tokens_in: 0,
    tokens_out: 0,
    cost_usd: null,
    budget_usd: null,
    budget_tokens: null,
    created_at: '',
    updated_at: '',
    ...(default_attempts != null && { default_attempts }),
  }) as ProjectOut;

function client(p: ProjectOut) {
  const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false } } });
  qc.setQueryData(['models'], { items: [{ id: 'm', label: 'M', default: true }] });
  qc.setQueryData(systemKeys.sandbox, sandboxStatus());
  qc.setQueryData(fileKeys.project('p'), { items: [], total: 0 });
  qc.setQueryData(projectKeys.detail('p'), p);
  return qc;
}

function composer(p: ProjectOut) {
  const onSend = vi.fn();
  render(
    <QueryClientProvider client={client(p)}>
      <Composer projectId="p" busy={false} onSend={onSend} />
    </QueryClientProvider>,
  );
  const ask = (text: string) => {
    const box = screen.getByRole('textbox', { name: 'Ask a question about your data' });
    fireEvent.change(box, { target: { value: text } });
    fireEvent.keyDown(box, { key: 'Enter' });
  };
  return { onSend, ask };
}

beforeEach(() => vi.clearAllMocks());

describe('Composer: Check with 3 attempts', () => {
  it('is off by default: a question is sent as before, with no attempts', () => {
    const { onSend, ask } = composer(project());
    const toggle = screen.getByRole('switch', { name: 'Check with 3 attempts' });
    expect(toggle.getAttribute('aria-checked')).toBe('false');
    expect(screen.getByTestId('attempts-choice').textContent).toBe('Check with 3 attempts');
    ask('Revenue in March?');
    expect(onSend.mock.calls[0][0]).toEqual({ query: 'Revenue in March?', model: 'm', fileIds: [] });
    expect('attempts' in onSend.mock.calls[0][0]).toBe(false);
  });

  it('turned on, sends attempts: 3; the number can be 2 to 5', () => {
    const { onSend, ask } = composer(project());
    const toggle = screen.getByRole('switch', { name: 'Check with 3 attempts' });
    // A switch is a button: Space and Enter toggle it from the keyboard, as a click does.
    toggle.focus();
    expect(document.activeElement).toBe(toggle);
    fireEvent.click(toggle);
    expect(toggle.getAttribute('aria-checked')).toBe('true');
    ask('Revenue in March?');
    expect(onSend).toHaveBeenLastCalledWith({ query: 'Revenue in March?', model: 'm', fileIds: [], attempts: 3 });
    const count = screen.getByRole('combobox', { name: 'Number of attempts' });
    expect(within(count).getAllByRole('option').map((o) => o.textContent)).toEqual(['2', '3', '4', '5']);
    fireEvent.change(count, { target: { value: '5' } });
    expect(screen.getByRole('switch', { name: 'Check with 5 attempts' })).toBeTruthy();
    ask('And in April?');
    expect(onSend).toHaveBeenLastCalledWith({ query: 'And in April?', model: 'm', fileIds: [], attempts: 5 });
  });

  it('starts on with the project’s default above 1; turned off it sends attempts: 1', () => {
    const { onSend, ask } = composer(project(4));
    const toggle = screen.getByRole('switch', { name: 'Check with 4 attempts' });
    expect(toggle.getAttribute('aria-checked')).toBe('true');
    ask('Revenue in March?');
    expect(onSend).toHaveBeenLastCalledWith({ query: 'Revenue in March?', model: 'm', fileIds: [], attempts: 4 });
    fireEvent.click(toggle);
    ask('And in April?');
    expect(onSend).toHaveBeenLastCalledWith({ query: 'And in April?', model: 'm', fileIds: [], attempts: 1 });
  });
});

describe('AutonomySwitch: Ask before repairs', () => {
  const session = (autonomy: string): SessionOut =>
    ({
      id: 's1',
      project_id: 'p',
      title: 'Revenue',
      autonomy,
      recorded: false,
      parent_session_id: null,
      branched_after_run_id: null,
      restored: null,
      tokens_in: 0,
      tokens_out: 0,
      cost_usd: null,
      created_at: '',
      updated_at: '',
    }) as SessionOut;

  const showSwitch = (autonomy: string) => {
    const qc = new QueryClient();
    render(
      <QueryClientProvider client={qc}>
        <AutonomySwitch session={session(autonomy)} />
      </QueryClientProvider>,
    );
  };

  it('offers review_repairs besides auto and review, and sets it with PATCH autonomy', async () => {
    vi.mocked(updateSession).mockResolvedValue({ data: session('review_repairs') } as never);
    showSwitch('auto');
    const repairs = screen.getByRole('switch', { name: /Ask before repairs/ });
    expect(repairs.getAttribute('aria-checked')).toBe('false');
    expect(screen.getByRole('switch', { name: /Review code/ }).getAttribute('aria-checked')).toBe('false');
    fireEvent.click(repairs);
    await waitFor(() => expect(updateSession).toHaveBeenCalledWith({ path: { session_id: 's1' }, body: { autonomy: 'review_repairs' } }));
  });

  it('shows review_repairs as on, and turns it back to auto', async () => {
    vi.mocked(updateSession).mockResolvedValue({ data: session('auto') } as never);
    showSwitch('review_repairs');
    const repairs = screen.getByRole('switch', { name: /Ask before repairs/ });
    expect(repairs.getAttribute('aria-checked')).toBe('true');
    fireEvent.click(repairs);
    await waitFor(() => expect(updateSession).toHaveBeenCalledWith({ path: { session_id: 's1' }, body: { autonomy: 'auto' } }));
  });

  it('in review mode every block waits, repairs too: no separate switch', () => {
    showSwitch('review');
    expect(screen.getByRole('switch', { name: /Review code/ }).getAttribute('aria-checked')).toBe('true');
    expect(screen.queryByRole('switch', { name: /Ask before repairs/ })).toBeNull();
  });
});

describe('DefaultAttempts (project settings)', () => {
  function Harness() {
    const p = useQuery(projectQuery('p'));
    return p.data ? <DefaultAttempts project={p.data} /> : null;
  }

  it('shows the project’s default and sets another (1–5) with PATCH default_attempts', async () => {
    vi.mocked(updateProject).mockResolvedValue({ data: project(3) } as never);
    render(
      <QueryClientProvider client={client(project())}>
        <Harness />
      </QueryClientProvider>,
    );
    const group = screen.getByRole('radiogroup', { name: 'Attempts per question' });
    expect(within(group).getAllByRole('radio').map((r) => r.textContent)).toEqual(['1 (off)', '2', '3', '4', '5']);
    expect(within(group).getByRole('radio', { checked: true }).textContent).toBe('1 (off)');
    fireEvent.click(within(group).getByRole('radio', { name: '3' }));
    await waitFor(() => expect(updateProject).toHaveBeenCalledWith({ path: { project_id: 'p' }, body: { default_attempts: 3 } }));
    await waitFor(() => expect(within(group).getByRole('radio', { checked: true }).textContent).toBe('3'));
  });
});
