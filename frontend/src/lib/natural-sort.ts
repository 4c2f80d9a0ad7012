/** Compares names as a person sorts them: case-blind, accents aside, numbers by value ("file 2" before "file 10"). */
const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

export const compareNames = (a: string, b: string): number => collator.compare(a, b);

/** The items in a person's order of their names (a new array). */
export const byName = <T extends { name: string }>(items: readonly T[]): T[] => [...items].sort((a, b) => compareNames(a.name, b.name));
