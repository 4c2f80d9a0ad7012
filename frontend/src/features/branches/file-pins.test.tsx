import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { SessionOut } from '@/client';
import { FilePinsNote, pinsBehind } from './file-pins';

const pin = (version: number, latest: number, kept = true, name = 'orders.csv') => ({
  file_id: `${name}-id`,
  name,
  version,
  latest_version: latest,
  kept,
  note: kept ? `Reads ${name} as version ${version} (latest is ${latest}).` : `${name} version ${version}, which this branch's past read, is no longer kept: the branch reads version ${latest}.`,
});

const session = (file_pins: SessionOut['file_pins']) => ({ id: 's1', file_pins }) as unknown as SessionOut;

const shown = (s: SessionOut, canEdit = true) =>
  render(
    <QueryClientProvider client={new QueryClient()}>
      <FilePinsNote session={s} canEdit={canEdit} />
    </QueryClientProvider>,
  );

describe('FilePinsNote', () => {
  it('says which older version the branch reads, with the action to move to the latest', () => {
    shown(session([pin(2, 3)]));
    expect(screen.getByTestId('branch-file-pins').textContent).toContain('Reads orders.csv as version 2 (latest is 3).');
    expect(screen.getByTestId('branch-use-latest-files').textContent).toContain('Use latest files');
  });

  it('says a pinned version no longer kept, and shows no action to a viewer', () => {
    shown(session([pin(1, 2, false)]), false);
    expect(screen.getByTestId('branch-file-pin').textContent).toContain('is no longer kept: the branch reads version 2.');
    expect(screen.queryByTestId('branch-use-latest-files')).toBeNull();
  });

  it('says nothing when every pinned file is at its latest', () => {
    expect(pinsBehind([pin(3, 3)])).toEqual([]);
    const { container } = shown(session([pin(3, 3)]));
    expect(container.textContent).toBe('');
  });
});
