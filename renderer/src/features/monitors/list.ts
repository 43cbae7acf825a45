import { ApiError, get, query } from '../../api/client';
import { byAttention, KINDS } from './kinds';
import type { Monitor } from './types';

/** Every kind's list (`GET /{kind}?appid=`); a kind this server does not offer (404/501) lists nothing. */
export async function listAll(appid: number | null): Promise<Monitor[]> {
  const lists = await Promise.all(
    KINDS.map(({ kind }) =>
      get<Monitor[]>(`/${kind}${query({ appid })}`).catch((err) => {
        if (err instanceof ApiError && (err.status === 404 || err.status === 501)) return [];
        throw err;
      }),
    ),
  );
  return lists.flat().sort(byAttention);
}
