import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { SandboxStatusOut } from '@/client';
import { systemKeys } from './queries';
import { SandboxBanner } from './sandbox-banner';
import { sandboxStatus } from './sandbox-status.fixture';

const status = sandboxStatus;

function show(s: SandboxStatusOut | undefined) {
  const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false } } });
  if (s) qc.setQueryData(systemKeys.sandbox, s);
  return render(
    <QueryClientProvider client={qc}>
      <SandboxBanner />
    </QueryClientProvider>,
  );
}

describe('SandboxBanner', () => {
  it('says analysis is disabled, why, and how to fix it', () => {
    show(
      status({
        available: false,
        isolated: false,
        mechanism: null,
        detail: 'bubblewrap cannot create a user namespace.',
        fix: 'Run the backend with --security-opt seccomp=unconfined, or set SANDBOX_ISOLATION=none.',
      }),
    );
    expect(screen.getByRole('alert').textContent).toBe(
      'Analysis is disabled: bubblewrap cannot create a user namespace. Fix: Run the backend with --security-opt seccomp=unconfined, or set SANDBOX_ISOLATION=none.',
    );
  });

  it('leaves out the fix when there is none', () => {
    show(status({ available: false, detail: 'The sandbox service does not answer', fix: null }));
    expect(screen.getByRole('alert').textContent).toBe('Analysis is disabled: The sandbox service does not answer.');
  });

  it('warns for good when code runs without isolation', () => {
    show(status({ isolation: 'none', mechanism: 'rlimits', isolated: false, detail: 'Limits only.' }));
    expect(screen.getByRole('status').textContent).toBe(
      'Analysis code is not isolated (SANDBOX_ISOLATION=none): use this only for a single trusted user.',
    );
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('shows nothing when code runs isolated, or before the status is known', () => {
    const { container } = show(status({}));
    expect(container.textContent).toBe('');
    const unknown = show(undefined);
    expect(unknown.container.querySelector('[data-testid=sandbox-banner]')).toBeNull();
  });
});
