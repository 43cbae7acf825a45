import { z } from 'zod';
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, PAGE_LIMIT_MIN } from '../lib/limits';

/**
 * `limit` 1-200 (default 100) and the `since` cursor. `since=0` or no `since` means "no cursor"
 * (contract, "Compatibility").
 */
export const pagingQuery = z.object({
  limit: z.coerce.number().int().min(PAGE_LIMIT_MIN).max(PAGE_LIMIT_MAX).default(PAGE_LIMIT_DEFAULT),
  since: z.coerce.number().int().min(0).default(0),
});
export type PagingQuery = z.output<typeof pagingQuery>;

export interface Paging {
  size: number;
  limit: number;
  since?: number;
  next?: string;
}
