import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import type { SessionOut } from '@/client';
import { updateSession } from '@/client';
import { AutonomySwitch } from './autonomy-switch';
import { sessionKeys } from './queries';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  updateSession: vi.fn(),
}));

const session: SessionOut = {
  id: 's1',
  project_id: 'p1',
  title: 'Revenue',
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

describe('AutonomySwitch', () => {
  it('shows the mode and turns review on with PATCH autonomy', async () => {
    const patch = vi.mocked(updateSession);
    patch.mockResolvedValue({ data: { ...session, autonomy: 'review' } } as never);
    const qc = new QueryClient();
    render(
      <QueryClientProvider client={qc}>
        <AutonomySwitch session={session} />
      </QueryClientProvider>,
    );
    const toggle = screen.getByRole('switch', { name: /Review code/ });
    expect(toggle.getAttribute('aria-checked')).toBe('false');
    expect(toggle.getAttribute('data-testid')).toBe('autonomy-switch');
    fireEvent.click(toggle);
    await waitFor(() => expect(patch).toHaveBeenCalledWith({ path: { session_id: 's1' }, body: { autonomy: 'review' } }));
    await waitFor(() => expect(qc.getQueryData<SessionOut>(sessionKeys.detail('s1'))?.autonomy).toBe('review'));
  });
});
