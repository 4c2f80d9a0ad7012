import { act, fireEvent, render, screen } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { describe, expect, it } from 'vitest';
import { noteProposed, proposedCount, ProposedNotice, useProposedStore } from './proposed-notice';
import { ShapedBy } from './shaped-by';

const knowledge = [
  { item_id: 'k1', title: 'Active customer', used: true },
  { item_id: 'k2', title: 'Revenue excludes refunds', used: true },
  { item_id: 'k3', title: 'Fiscal year starts in April', used: false },
];

describe('ShapedBy', () => {
  it('names the items the answer used, each linking to it, and folds the ones only given', () => {
    render(
      <MemoryRouter>
        <ShapedBy projectId="p" knowledge={knowledge} />
      </MemoryRouter>,
    );
    expect(screen.getByTestId('shaped-by').textContent).toMatch(/^Shaped by:Active customer·Revenue excludes refunds/);
    const links = screen.getAllByTestId('shaped-by-item');
    expect(links.map((a) => a.getAttribute('href'))).toEqual(['/projects/p/knowledge?item=k1', '/projects/p/knowledge?item=k2']);
    expect(screen.queryByTestId('also-given')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: /Also given \(1\)/ }));
    expect(screen.getByTestId('also-given-item').textContent).toBe('Fiscal year starts in April');
  });

  it('says when the items given shaped nothing, and lists them folded', () => {
    render(
      <MemoryRouter>
        <ShapedBy projectId="p" knowledge={[knowledge[2]]} />
      </MemoryRouter>,
    );
    expect(screen.getByTestId('shaped-by').textContent).toContain('none of it shaped this answer');
    expect(screen.queryByTestId('shaped-by-item')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: /Given \(1\)/ }));
    expect(screen.getByTestId('also-given-item').getAttribute('href')).toBe('/projects/p/knowledge?item=k3');
  });

  it('shows nothing for a run that was given no knowledge', () => {
    const { container } = render(
      <MemoryRouter>
        <ShapedBy projectId="p" knowledge={[]} />
      </MemoryRouter>,
    );
    expect(container.textContent).toBe('');
  });
});

describe('ProposedNotice', () => {
  it('counts the proposals a session stream announced and links to the review', () => {
    expect(proposedCount('{"run_id":"r","seq":9,"items":[{},{}]}')).toBe(2);
    expect(proposedCount('not json')).toBe(0);
    render(
      <MemoryRouter>
        <ProposedNotice projectId="p" sessionId="s" />
      </MemoryRouter>,
    );
    expect(screen.queryByTestId('proposed-notice')).toBeNull();
    act(() => noteProposed('s', '{"items":[{"id":"a"},{"id":"b"}]}'));
    act(() => noteProposed('other', '{"items":[{"id":"c"}]}'));
    expect(screen.getByTestId('proposed-notice').textContent).toContain("The agent proposed 2 items for the team's knowledge — review them");
    expect(screen.getByRole('link', { name: 'Review' }).getAttribute('href')).toBe('/projects/p/knowledge?status=proposed');
    fireEvent.click(screen.getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByTestId('proposed-notice')).toBeNull();
    expect(useProposedStore.getState().bySession).toEqual({ other: 1 });
  });
});
