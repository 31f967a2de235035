// A list read from one tool, reloaded after each change.

import { useCallback, useEffect, useState } from 'react';

import { describe } from '../messages';

export function useList<T>(load: () => Promise<T[]>) {
  const [items, setItems] = useState<T[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(async () => {
    try {
      setItems(await load());
      setError(null);
    } catch (e) {
      setError(describe(e));
    }
  }, [load]);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { items, error, reload };
}
