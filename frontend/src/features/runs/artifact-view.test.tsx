import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Answer } from './answer';
import { ArtifactView } from './artifact-view';
import type { StreamArtifact } from './events';

const ID = '0b7e6a4c-9d1f-4e2a-8c3b-5f6a7b8c9d0e';
const URL_OF = `/api/v1/artifacts/${ID}/content`;
const image: StreamArtifact = { id: ID, kind: 'image', name: 'chart.png', mime: 'image/png', size: 3, url: URL_OF };

let made = 0;
beforeEach(() => {
  made = 0;
  vi.stubGlobal('fetch', vi.fn(async () => new Response('png', { headers: { 'Content-Type': 'image/png' } })));
  URL.createObjectURL = vi.fn(() => `blob:image-${++made}`);
  URL.revokeObjectURL = vi.fn();
});
afterEach(() => vi.unstubAllGlobals());

const client = () => new QueryClient({ defaultOptions: { queries: { retry: false } } });

describe("an artifact's image", () => {
  it('gives its object URL back when the card goes, though its bytes stay cached', async () => {
    const qc = client();
    const card = render(
      <QueryClientProvider client={qc}>
        <ArtifactView artifact={image} />
      </QueryClientProvider>,
    );
    await waitFor(() => expect(screen.getByRole('img').getAttribute('src')).toBe('blob:image-1'));
    card.unmount();
    expect(URL.revokeObjectURL).toHaveBeenCalledWith('blob:image-1');

    // Shown again from the cache: a new URL, revoked in turn.
    const again = render(
      <QueryClientProvider client={qc}>
        <ArtifactView artifact={image} />
      </QueryClientProvider>,
    );
    await waitFor(() => expect(screen.getByRole('img').getAttribute('src')).toBe('blob:image-2'));
    expect(fetch).toHaveBeenCalledTimes(1);
    again.unmount();
    expect(URL.revokeObjectURL).toHaveBeenCalledWith('blob:image-2');
  });

  it('in an answer gives its URL back when the answer goes', async () => {
    const answer = render(
      <QueryClientProvider client={client()}>
        <Answer text={`![chart](${URL_OF})`} />
      </QueryClientProvider>,
    );
    await waitFor(() => expect(answer.container.querySelector('img')?.getAttribute('src')).toBe('blob:image-1'));
    answer.unmount();
    expect(URL.revokeObjectURL).toHaveBeenCalledWith('blob:image-1');
  });
});
