import { act, fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import type { StepView } from './run-reducer';
import { splitThought, StepCard } from './step-card';

const step = (over: Partial<StepView> = {}): StepView => ({
  index: 2,
  thought: 'Thought: Retry with the right column.\n<code>\ndf["units"].sum()\n</code>',
  code: 'df["units"].sum()',
  output: null,
  error: null,
  durationMs: 1500,
  tokensIn: 10,
  tokensOut: 20,
  finished: true,
  queries: [],
  ...over,
});

describe('StepCard', () => {
  it('renders the thought, the code and an error styled as an error', () => {
    render(<StepCard step={step({ error: "KeyError: 'unit'" })} artifacts={[]} nextStep={3} defaultOpen />);
    expect(screen.getByTestId('step-thought').textContent).toBe('Retry with the right column.');
    expect(screen.getByTestId('code').textContent).toContain('df["units"].sum()');
    expect(screen.getByRole('alert').textContent).toContain("KeyError: 'unit'");
    expect(screen.getByText(/retried in step 3/)).toBeTruthy();
    expect(screen.getByText(/1\.5 s · 30 tokens/)).toBeTruthy();
  });

  it('collapses long output and expands it on request', () => {
    const output = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n');
    render(<StepCard step={step({ output })} artifacts={[]} defaultOpen />);
    expect(screen.getByTestId('step-output').textContent).not.toContain('line 39');
    fireEvent.click(screen.getByRole('button', { name: /Show all 40 lines/ }));
    expect(screen.getByTestId('step-output').textContent).toContain('line 39');
  });

  it('says how long a running step has been running, and its output as it comes', () => {
    vi.useFakeTimers();
    try {
      const running = step({ finished: false, output: 'chunk 1 of 40\n' });
      render(<StepCard step={running} artifacts={[]} live />);
      expect(screen.queryByTestId('step-elapsed')).toBeNull(); // not for a moment's work
      act(() => vi.advanceTimersByTime(12_000));
      expect(screen.getByTestId('step-elapsed').textContent).toBe('running for 12 s');
      expect(screen.getByText(/chunk 1 of 40/)).toBeTruthy();
    } finally {
      vi.useRealTimers();
    }
  });

  it('shows the code while it is still streaming', () => {
    render(<StepCard step={step({ code: null, finished: false, thought: 'Thought: Load.\n<code>\nimport pan' })} artifacts={[]} live />);
    expect(screen.getByTestId('code').textContent).toContain('import pan');
    expect(screen.getByLabelText('Step running')).toBeTruthy();
  });
});

describe('StepCard folding', () => {
  it('folds a finished step to its header and first line of thought, and opens it on request', () => {
    render(<StepCard step={step({ output: 'done' })} artifacts={[]} />);
    expect(screen.queryByTestId('code')).toBeNull();
    expect(screen.getByTestId('step-preview').textContent).toBe('Retry with the right column.');
    fireEvent.click(screen.getByRole('button', { name: 'Show step 2' }));
    expect(screen.getByTestId('code').textContent).toContain('df["units"].sum()');
    expect(screen.getByTestId('step-output').textContent).toBe('done');
    fireEvent.click(screen.getByRole('button', { name: 'Fold step 2' }));
    expect(screen.queryByTestId('code')).toBeNull();
  });

  it('keeps a running step open, and folds it when it finishes', () => {
    const { rerender } = render(<StepCard step={step({ finished: false })} artifacts={[]} live />);
    expect(screen.getByTestId('code')).toBeTruthy();
    rerender(<StepCard step={step({ finished: true })} artifacts={[]} live />);
    expect(screen.queryByTestId('code')).toBeNull();
  });

  it('clips a long error to its first lines, with Show all', () => {
    const error = Array.from({ length: 30 }, (_, i) => `frame ${i}`).join('\n');
    render(<StepCard step={step({ error })} artifacts={[]} defaultOpen />);
    expect(screen.getByTestId('step-error').textContent).not.toContain('frame 29');
    fireEvent.click(screen.getByRole('button', { name: /Show all 30 lines/ }));
    expect(screen.getByTestId('step-error').textContent).toContain('frame 29');
  });
});

describe('splitThought', () => {
  it('separates prose from code in both smolagents and markdown forms', () => {
    expect(splitThought('Thought: a\n<code>\nx = 1\n</code>')).toEqual({ thought: 'a', draft: 'x = 1\n' });
    expect(splitThought('Plan b\n```python\ny = 2\n```')).toEqual({ thought: 'Plan b', draft: 'y = 2\n' });
    expect(splitThought('Thought: only words')).toEqual({ thought: 'only words', draft: null });
  });
});
