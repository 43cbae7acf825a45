import type { RequestHandler } from 'express';
import multer from 'multer';
import type { AppContext } from '../../context';
import { principalOf, TOK } from '../../http/auth';
import { errors } from '../../http/errors';
import { RouteTable } from '../../http/routes';
import { UPLOAD_LIMIT_BYTES } from '../../lib/limits';
import { presentCurrentUser } from '../current-user/service';
import { avatarFile, deleteAvatar, setAvatar } from './service';

const WRITE = { ...TOK, access: 'write' } as const;

const single = multer({
  storage: multer.memoryStorage(),
  limits: { fileSize: UPLOAD_LIMIT_BYTES, files: 1, fields: 10 },
}).single('file');

/** multer with the upload limit named in the error (the global handler only knows the JSON limit). */
const upload: RequestHandler = (req, res, next) => {
  single(req, res, (err: unknown) => {
    if (!err) return next();
    const code = (err as { code?: unknown }).code;
    if (code === 'LIMIT_FILE_SIZE') return next(errors.payloadTooLarge(UPLOAD_LIMIT_BYTES));
    if (typeof code === 'string' && code.startsWith('LIMIT_'))
      return next(errors.badRequest('invalid multipart body: one field named file expected'));
    next(errors.badRequest('invalid multipart body'));
  });
};

/** Spec "Current user ...": avatar upload and removal; `GET /image/avatar/{file}` serves it (docs/api.md). */
export function avatarRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'avatars');
  t.post(
    '/current/user/image',
    WRITE,
    async (req) => presentCurrentUser(ctx, await setAvatar(ctx, principalOf(req).userId, req.file?.buffer)),
    upload,
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
