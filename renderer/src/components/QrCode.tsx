import QRCode from 'qrcode';
import { useEffect, useState } from 'react';

/** A QR code as a data: image (allowed by the CSP's img-src), with the text as its label. */
export function QrCode({ text, label, size = 220 }: { text: string; label: string; size?: number }) {
  const [src, setSrc] = useState('');
  useEffect(() => {
    let live = true;
    QRCode.toDataURL(text, { width: size, margin: 1, errorCorrectionLevel: 'M' }).then(
      (url) => live && setSrc(url),
      () => live && setSrc(''),
    );
    return () => {
      live = false;
    };
  }, [text, size]);
  return src ? <img className="qr" src={src} alt={label} width={size} height={size} /> : null;
}
