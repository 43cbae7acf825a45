import type { AppContext } from '../../context';
import { principalOf, TOK } from '../../http/auth';
import { RouteTable } from '../../http/routes';
import { singleFileUpload } from '../../http/upload';
import { presentCurrentUser } from '../current-user/service';
import { avatarFile, deleteAvatar, setAvatar } from './service';

const WRITE = { ...TOK, access: 'write' } as const;

/** Spec "Current user ...": avatar upload and removal; `GET /image/avatar/{file}` serves it (docs/api.md). */
export function avatarRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'avatars');
  t.post(
    '/current/user/image',
    WRITE,
    async (req) => presentCurrentUser(ctx, await setAvatar(ctx, principalOf(req).userId, req.file?.buffer)),
    singleFileUpload(),
  );
  t.delete('/current/user/image', WRITE, async (req) =>
    presentCurrentUser(ctx, await deleteAvatar(ctx, principalOf(req).userId)),
  );
  // Public like channel logos: an <img> sends no token; names are random.
  t.get('/image/avatar/:file', null, (req, res) => {
    const f = avatarFile(ctx, String(req.params.file));
    res.setHeader('Content-Type', f.mime);
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.sendFile(f.path);
    return undefined;
  });
  return t;
}
