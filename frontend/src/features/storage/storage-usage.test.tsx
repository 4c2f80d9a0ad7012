import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { StorageUsageOut } from '@/client';
import { storageKeys } from './queries';
import { ProjectStorage } from './storage-usage';

const MB = 1024 * 1024;

const usage = (over: Partial<StorageUsageOut> = {}): StorageUsageOut => ({
  used_bytes: 0,
  quota_bytes: 2048 * MB,
  files: 0,
  versions: 0,
  files_bytes: 0,
  copies_bytes: 0,
  artifacts: 0,
  artifacts_bytes: 0,
  snapshots: 0,
  snapshots_bytes: 0,
  projects: 0,
  snapshots_refused: null,
  ...over,
});

function show(u: StorageUsageOut) {
  const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false } } });
  qc.setQueryData(storageKeys.project('p'), u);
  render(
    <QueryClientProvider client={qc}>
      <ProjectStorage projectId="p" />
    </QueryClientProvider>,
  );
}

describe('ProjectStorage', () => {
  it('shows use against the quota and what fills it', () => {
    show(usage({ used_bytes: 1229 * MB, files_bytes: 1100 * MB, files: 14, versions: 32, artifacts_bytes: 129 * MB }));
    const bar = screen.getByRole('progressbar', { name: 'Project storage used' });
    expect(bar.getAttribute('aria-valuetext')).toBe('1.2 GB of 2.0 GB');
    expect(bar.getAttribute('data-state')).toBe('ok');
    expect(screen.getByTestId('project-storage-breakdown').textContent).toBe(
      '1.1 GB in 14 files (32 versions), 129 MB of artifacts and snapshots',
    );
    expect(screen.queryByRole('status')).toBeNull();
  });

  it('says when the quota is reached', () => {
    show(usage({ used_bytes: 2048 * MB, files_bytes: 2048 * MB, files: 1, versions: 1 }));
    expect(screen.getByRole('progressbar').getAttribute('data-state')).toBe('reached');
    expect(within(screen.getByTestId('project-storage')).getByRole('status').textContent).toMatch(/quota is reached/);
  });

  it('says why the last save of the variables was refused, naming what to delete', () => {
    const why = 'The variables after this question were not saved: … the largest: “Sales” (700.0 KB).';
    show(usage({ snapshots_refused: why }));
    expect(screen.getByRole('alert').textContent).toBe(why);
  });

  it('shows the use alone when there is no quota', () => {
    show(usage({ quota_bytes: null, used_bytes: 5 * MB, files_bytes: 5 * MB, files: 1, versions: 1 }));
    expect(screen.queryByRole('progressbar')).toBeNull();
    expect(screen.getByTestId('project-storage-bar-text').textContent).toBe('5.0 MB used, no quota');
  });
});
