import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { describe, expect, it } from 'vitest';
import type { ModelList } from '@/client';
import { ModelBanner } from './model-banner';
import { systemKeys } from './queries';

function show(models: ModelList | undefined) {
  const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false, enabled: false } } });
  if (models) qc.setQueryData(systemKeys.models, models);
  return render(
    <QueryClientProvider client={qc}>
      <MemoryRouter>
        <ModelBanner />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

describe('ModelBanner', () => {
  it('says that no question can be answered, and what the server needs, when it has no model', () => {
    show({ items: [] });
    expect(screen.getByRole('status').querySelector('p')!.textContent).toBe(
      'No model is configured: questions cannot be answered until the server sets LLM_MODEL (see the README, Connecting an LLM).',
    );
    // …and offers the demo project meanwhile.
    expect(screen.getByRole('button', { name: 'Open the demo project' })).toBeTruthy();
  });

  it('shows nothing while models are configured, or before the server has said', () => {
    const configured = show({ items: [{ id: 'openai/gpt-4o', label: 'gpt-4o', default: true }] });
    expect(configured.container.textContent).toBe('');
    const unknown = show(undefined);
    expect(unknown.container.textContent).toBe('');
  });
});
