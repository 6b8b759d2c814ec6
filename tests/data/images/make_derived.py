#!/usr/bin/python3
"""Makes the derived test images in this folder from chelsea.png and china.jpg with Pillow (see ORIGIN.md).

Run from anywhere: /usr/bin/python3 tests/data/images/make_derived.py. The files it writes are committed; the
tests only read them. PNGs Pillow cannot write (16-bit colour, a header declaring a huge image) are written chunk
by chunk here.
"""
import os
import struct
import zlib

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def write_png(name, width, height, bit_depth, color_type, rows):
    """A PNG of one IDAT: each row's bytes after filter byte 0 (none)."""
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0)
    raw = b"".join(b"\x00" + row for row in rows)
    idat = png_chunk(b"IDAT", zlib.compress(raw)) if rows else b""
    with open(path(name), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + idat + png_chunk(b"IEND", b""))


def rgb16_rows(image):
    """16-bit RGB rows whose high bytes are the image's and whose low bytes vary, so a decoder must cut them."""
    rows = []
    for y in range(image.height):
        row = bytearray()
        for x in range(image.width):
            for c, v in enumerate(image.getpixel((x, y))):
                row += struct.pack(">H", v * 256 + (x * 7 + y * 3 + c * 50) % 256)
        rows.append(bytes(row))
    return rows


def huge_jpeg(name):
    """A real 8x8 JPEG whose frame header (SOF0) is rewritten to declare 65000 x 65000."""
    small = path(name)
    Image.new("RGB", (8, 8), (10, 20, 30)).save(small, "JPEG")
    data = bytearray(open(small, "rb").read())
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = struct.pack(">HH", 65000, 65000)
    open(small, "wb").write(bytes(data))


def main():
    cat = Image.open(path("chelsea.png")).convert("RGB")
    base = cat.resize((cat.width // 2, cat.height // 2), Image.LANCZOS)  # 225 x 150
    # JPEG: gray, CMYK (Pillow writes Adobe polarity), 4:4:4 progressive.
    base.convert("L").save(path("chelsea_gray.jpg"), "JPEG", quality=90)
    base.convert("CMYK").save(path("chelsea_cmyk.jpg"), "JPEG", quality=90)
    base.save(path("chelsea_444_progressive.jpg"), "JPEG", quality=90, subsampling=0, progressive=True)
    # PNG: alpha (a gradient, with fully transparent pixels), gray and alpha, 1-bit, a palette with transparency,
    # 16-bit colour.
    rgba = base.copy()
    rgba.putalpha(Image.linear_gradient("L").resize(base.size))
    rgba.save(path("chelsea_rgba.png"))
    base.convert("LA").save(path("chelsea_la.png"))
    base.convert("1").save(path("chelsea_1bit.png"))
    base.convert("P", palette=Image.ADAPTIVE, colors=64).save(path("chelsea_palette_trns.png"), transparency=0)
    small = base.resize((64, 48), Image.LANCZOS)
    write_png("chelsea_rgb16.png", small.width, small.height, 16, 2, rgb16_rows(small))
    # 16-bit gray, which Pillow opens as mode I and clips to 255 where we keep the high byte.
    write_png("gray16.png", 4, 1, 16, 0, [struct.pack(">HHHH", 1000, 300, 65535, 200)])
    # WebP: lossy, lossless, lossy with alpha.
    base.save(path("chelsea_lossy.webp"), "WEBP", quality=80)
    base.save(path("chelsea_lossless.webp"), "WEBP", lossless=True)
    rgba.save(path("chelsea_alpha.webp"), "WEBP", quality=80)
    # A PNG named .jpg: formats are told by their bytes.
    small.save(path("png_named.jpg"), "PNG")
    # Broken inputs: a JPEG, a PNG and a WebP cut in half, an empty file, text, headers declaring huge images.
    china = open(path("china.jpg"), "rb").read()
    open(path("china_truncated.jpg"), "wb").write(china[:len(china) // 2])
    for name in ("chelsea_rgba.png", "chelsea_lossy.webp"):
        data = open(path(name), "rb").read()
        stem, ext = os.path.splitext(name)
        open(path(stem + "_truncated" + ext), "wb").write(data[:len(data) // 2])
    open(path("empty.jpg"), "wb").close()
    open(path("not_an_image.jpg"), "w").write("label,path\n3,cat.jpg\n")
    write_png("huge_header.png", 100000, 100000, 8, 2, [])
    huge_jpeg("huge_header.jpg")


if __name__ == "__main__":
    main()
