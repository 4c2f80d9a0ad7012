import { QueryClient, QueryClientProvider, useQuery } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { updateProject, type ProjectOut } from '@/client';
import { ApiError } from '@/lib/api';
import { projectKeys, projectQuery } from './queries';
import { UsagePanel } from './usage-panel';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  updateProject: vi.fn(),
}));
const patch = vi.mocked(updateProject);

const project = (over: Partial<ProjectOut> = {}): ProjectOut => ({
  id: 'p',
  role: 'owner',
  name: 'Sales',
  description: '',
  tokens_in: 3000,
  tokens_out: 412,
  cost_usd: 0.0031,
  budget_usd: null,
  budget_tokens: null,
  default_attempts: 1,
  created_at: '',
  updated_at: '',
  ...over,
});

/** The panel as the project page shows it: fed by the project query, which a save updates. */
function Harness() {
  const p = useQuery(projectQuery('p'));
  return p.data ? <UsagePanel project={p.data} /> : null;
}

function show(p: ProjectOut) {
  const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false } } });
  qc.setQueryData(projectKeys.detail('p'), p);
  render(
    <QueryClientProvider client={qc}>
      <Harness />
    </QueryClientProvider>,
  );
  return qc;
}

const tokenForm = () => screen.getByTestId('budget-tokens');
const typeAndSave = (form: HTMLElement, text: string) => {
  fireEvent.change(within(form).getByRole('textbox'), { target: { value: text } });
  fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
};

beforeEach(() => {
  patch.mockReset();
});

describe('UsagePanel', () => {
  it('shows what the project has spent, and no budget yet', () => {
    show(project({ tokens_in: 12_345, tokens_out: 1_234 }));
    const usage = screen.getByTestId('project-usage');
    expect(within(usage).getByText('12,345')).toBeTruthy();
    expect(within(usage).getByText('1,234')).toBeTruthy();
    expect(within(usage).getByText('$0.0031')).toBeTruthy();
    expect(within(usage).getAllByText('No budget')).toHaveLength(2);
    expect(screen.queryByRole('progressbar')).toBeNull();
    expect(screen.queryByTestId('budget-reached')).toBeNull();
  });

  it('says when no price is known, so a dollar budget counts nothing', () => {
    show(project({ cost_usd: null }));
    expect(within(screen.getByTestId('project-usage')).getByText('—')).toBeTruthy();
    expect(within(screen.getByTestId('budget-usd')).getByText(/no known price/)).toBeTruthy();
  });

  it('fills a bar towards the budget, destructive and with a notice once it is reached', () => {
    show(project({ budget_tokens: 1000, budget_usd: 1 }));
    const tokens = screen.getByTestId('budget-bar-tokens');
    expect(tokens.getAttribute('data-state')).toBe('reached');
    expect(tokens.getAttribute('aria-valuenow')).toBe('100');
    expect((tokens.firstChild as HTMLElement).className).toContain('bg-destructive');
    expect(within(tokenForm()).getByText('3,412 tokens of 1,000 tokens')).toBeTruthy();
    expect(within(tokenForm()).getByText('341 %')).toBeTruthy();
    expect(screen.getByTestId('budget-bar-usd').getAttribute('data-state')).toBe('ok');
    expect(screen.getByTestId('budget-reached').textContent).toBe('Budget reached: new questions are refused until it is raised.');
    expect((within(tokenForm()).getByRole('textbox') as HTMLInputElement).value).toBe('1,000');
  });

  it('checks the input before sending anything', () => {
    show(project());
    typeAndSave(tokenForm(), '-5');
    expect(within(tokenForm()).getByRole('alert').textContent).toBe('A budget cannot be negative.');
    typeAndSave(tokenForm(), '1.5');
    expect(within(tokenForm()).getByRole('alert').textContent).toBe('Tokens are counted in whole numbers.');
    typeAndSave(screen.getByTestId('budget-usd'), 'ten');
    expect(within(screen.getByTestId('budget-usd')).getByRole('alert').textContent).toBe('Enter an amount in dollars, like 5 or 2.50.');
    expect(patch).not.toHaveBeenCalled();
    fireEvent.change(within(tokenForm()).getByRole('textbox'), { target: { value: '2' } });
    expect(within(tokenForm()).queryByRole('alert')).toBeNull();
  });

  it('sends only the budget it sets, then shows it', async () => {
    show(project());
    patch.mockResolvedValue({ data: project({ budget_tokens: 4000 }) } as never);
    typeAndSave(tokenForm(), '4,000');
    await waitFor(() => expect(patch).toHaveBeenCalledWith({ path: { project_id: 'p' }, body: { budget_tokens: 4000 } }));
    await screen.findByTestId('budget-bar-tokens');
    expect(screen.getByTestId('budget-bar-tokens').getAttribute('data-state')).toBe('near');
    expect(within(tokenForm()).getByText('3,412 tokens of 4,000 tokens')).toBeTruthy();
  });

  it('removes a budget by sending null', async () => {
    show(project({ budget_usd: 0.002 }));
    patch.mockResolvedValue({ data: project() } as never);
    fireEvent.click(screen.getByRole('button', { name: 'Remove the cost budget (usd)' }));
    await waitFor(() => expect(patch).toHaveBeenCalledWith({ path: { project_id: 'p' }, body: { budget_usd: null } }));
    await waitFor(() => expect(screen.queryByTestId('budget-bar-usd')).toBeNull());
    expect(screen.queryByTestId('budget-reached')).toBeNull();
  });

  it("shows the server's reason when a save fails", async () => {
    show(project());
    patch.mockRejectedValue(new ApiError(422, 'budget_usd: Input should be less than or equal to 1000000000', 'validation_error'));
    typeAndSave(screen.getByTestId('budget-usd'), '5');
    const alert = await within(screen.getByTestId('budget-usd')).findByRole('alert');
    expect(alert.textContent).toBe('budget_usd: Input should be less than or equal to 1000000000');
  });
});
