"""One way to turn a seed into a random generator, and the secure source that replaces it for a real release.

Seeded noise exists for reproducible demonstrations. A real release uses secure mode: :data:`SECURE` as a
mechanism's ``rng``, or :func:`secure_noise` around any code, draws from :class:`SecureRandom` (the operating
system's cryptographic source), and the mechanisms then release on a grid that defeats Mironov's (2012)
floating-point attack (:func:`dpcore.mechanisms.additive.secure_additive`).
"""
from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
import os
import zlib

import numpy as np

from .exceptions import DPTypeError, DPValueError


def as_generator(seed: "int | np.random.Generator | str | None" = None, *, name: str = "seed") -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` from a seed, a generator or ``None``.

    ``"secure"`` (:data:`SECURE`) or a :class:`SecureRandom` gives a :class:`SecureRandom`. ``name`` is what the
    caller calls the seed, for the refusals (an estimator's ``random_state``).

    >>> bool(as_generator(0).integers(10) == as_generator(0).integers(10))
    True
    """
    if isinstance(seed, (np.random.Generator, SecureRandom)):
        return seed
    if isinstance(seed, str) and seed == SECURE:
        return SecureRandom()
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, (numbers.Integral, np.integer)) and not isinstance(seed, bool):
        if int(seed) < 0:
            raise DPValueError(f"{name} must be a non-negative integer, got {seed}")
        return np.random.default_rng(int(seed))
    raise DPTypeError(f"{name} must be an int, a numpy Generator, 'secure' or None, got {type(seed).__name__}")


def child_seed(rng: np.random.Generator) -> int:
    """Draw an integer seed (for torch or a sub-computation) from ``rng``."""
    return int(rng.integers(0, 2**31 - 1))


def seed_sequence(seed: int, *keys: "int | str") -> np.random.SeedSequence:
    """numpy's :class:`~numpy.random.SeedSequence` of ``seed`` spawned at ``keys`` (a name is its CRC-32): the
    one way dpcore derives independent streams from one seed. ``SeedSequence(seed).spawn(k)[i]`` is
    ``seed_sequence(seed, i)``; names keep the streams of unrelated parts apart without a registry of offsets
    (never ``seed + 7919``: that stream is another seed's main stream).

    >>> seed_sequence(3, 1).generate_state(1) == np.random.SeedSequence(3).spawn(2)[1].generate_state(1)
    array([ True])
    """
    if isinstance(seed, bool) or not isinstance(seed, (numbers.Integral, np.integer)) or int(seed) < 0:
        raise DPTypeError(f"seed must be a non-negative integer, got {seed!r}")
    key = tuple(zlib.crc32(k.encode()) if isinstance(k, str) else int(k) for k in keys)
    return np.random.SeedSequence(entropy=int(seed), spawn_key=key)


def substream(seed: int, *keys: "int | str") -> np.random.Generator:
    """An independent generator for the part of a computation named by ``keys``, from ``seed``
    (:func:`seed_sequence`).

    >>> bool(substream(0, "pool").random() != substream(0, "canaries").random())
    True
    """
    return np.random.Generator(np.random.PCG64(seed_sequence(seed, *keys)))


def substream_seed(seed: int, *keys: "int | str") -> int:
    """An integer seed (below 2**31) for the part of a computation named by ``keys``: where a callee takes a
    seed rather than a generator (a shadow model's training run)."""
    return int(seed_sequence(seed, *keys).generate_state(1)[0] >> 1)


def torch_generator(seed: int, device="cpu"):
    """A seeded ``torch.Generator`` on ``device`` (the one place dpcore builds them): noise for a tensor is drawn
    by a generator of its device (:func:`dpcore.mechanisms.gaussian_sum.gaussian_like`).

    >>> torch_generator(0).device.type
    'cpu'
    """
    import torch  # torch loads in a second: only the code that draws tensors pays for it

    return torch.Generator(device=device).manual_seed(int(seed))


# --------------------------------------------------------------------------------------------------------------
# Secure mode: randomness nobody can reproduce, for a real release.

#: pass as ``rng`` to any mechanism's ``randomise`` (or ``as_generator``) for secure noise
SECURE = "secure"

_SECURE_NOISE: contextvars.ContextVar[bool] = contextvars.ContextVar("dpcore_secure_noise", default=False)

#: below this many bytes the operating system's source is read directly; above, it keys an AES-256-CTR keystream
_KEYSTREAM_FROM = 4096
_ZEROS = bytes(1 << 16)  # the keystream is AES-CTR applied to zeros; grown (never shrunk) as larger draws come
_ONE_BITS = 0x3FF0000000000000  # the bits of the double 1.0


def _zeros(n: int) -> bytes:
    global _ZEROS
    if len(_ZEROS) < n:
        _ZEROS = bytes(max(n, 2 * len(_ZEROS)))
    return _ZEROS


def _keystream(nbytes: int) -> bytearray:
    """``nbytes`` of AES-256 counter-mode keystream under a fresh key and nonce from ``os.urandom``.

    This is the construction of NIST SP 800-90A's CTR_DRBG (a block cipher in counter mode keyed from an entropy
    source), at several GB/s where ``os.urandom`` gives a few hundred MB/s: the difference a DP-SGD step notices.
    """
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    enc = Cipher(algorithms.AES(os.urandom(32)), modes.CTR(os.urandom(16))).encryptor()
    out = bytearray(nbytes + 15)  # update_into wants room for a block beyond the data
    enc.update_into(memoryview(_zeros(nbytes))[:nbytes], out)
    return out


class SecureRandom:
    """The draws the mechanisms need, every bit from the operating system's cryptographic source.

    It answers the subset of :class:`numpy.random.Generator` that ``dpcore`` uses (``random``, ``integers``,
    ``choice``, ``permutation``, ``standard_normal``, ``normal``, ``exponential``, ``laplace``, ``gamma`` with a
    whole-number shape), so code written for a seeded generator runs on it unchanged. It cannot be seeded.
    Small draws read ``os.urandom``; large ones an AES-256-CTR keystream keyed from it (:func:`_keystream`).

    Continuous draws start from :meth:`uniform_positive`, a uniform on (0, 1) at full double precision (every
    binade reached, as in Mironov's snapping mechanism, 2012), so ``-log(U)`` has no gaps in its tail. What keeps
    released values free of the floating-point artefacts of Mironov's attack is the grid the secure mechanisms
    round to (:func:`dpcore.mechanisms.additive.secure_additive`); this class alone only makes the noise
    unpredictable. The arithmetic runs in torch (float64), several times faster than numpy's here.

    >>> u = SecureRandom().uniform_positive(1000)
    >>> bool(((u > 0) & (u < 1)).all())
    True
    """

    def __repr__(self) -> str:
        return "SecureRandom(os.urandom)"

    @staticmethod
    def words(n: int) -> np.ndarray:
        """``n`` uniformly random unsigned 64-bit integers."""
        n = int(n)
        if n <= 0:
            return np.zeros(0, np.uint64)
        raw = os.urandom(8 * n) if 8 * n < _KEYSTREAM_FROM else _keystream(8 * n)
        return np.frombuffer(raw, dtype=np.uint64, count=n).copy() if isinstance(raw, bytes) else \
            np.frombuffer(raw, dtype=np.uint64, count=n)

    @classmethod
    def _unit(cls, n: int):
        """``n`` uniforms on [0, 1) with 52 random bits, as a float64 torch tensor (mantissa bits under 1.0's
        exponent, minus 1)."""
        import torch

        bits = cls.words(n)
        np.right_shift(bits, np.uint64(12), out=bits)  # in place: numpy's unsigned shifts are logical
        np.bitwise_or(bits, np.uint64(_ONE_BITS), out=bits)
        unit = bits.view(np.float64)
        unit -= 1.0
        return torch.from_numpy(unit)

    def _uniform_positive(self, n: int, u=None):
        """Torch tensor of ``n`` uniforms on (0, 1) at full precision (or ``u``, made so): a draw below 2**-12
        (its first 12 bits zero) is redrawn as 2**-12 times a fresh one, its exact conditional law, down every
        binade."""

        u = self._unit(n) if u is None else u
        flat = u.numpy()  # the same memory: numpy's checks cost less than torch's on short vectors
        small = np.flatnonzero(flat < 2.0**-12)  # one draw in 4096
        if small.size:
            flat[small] = self._uniform_positive(small.size).numpy() * 2.0**-12
        return u

    def uniform_positive(self, size=None):
        """Uniform on (0, 1) with every double's binade reachable."""
        shape = _shape(size)
        u = self._uniform_positive(int(np.prod(shape, dtype=np.int64))).numpy()
        return u.reshape(shape) if size is not None else float(u[0])

    def random(self, size=None):
        """Uniform on [0, 1) with 52 random bits, like ``Generator.random``."""
        shape = _shape(size)
        u = self._unit(int(np.prod(shape, dtype=np.int64))).numpy()
        return u.reshape(shape) if size is not None else float(u[0])

    def integers(self, low, high=None, size=None):
        """Uniform integers in [low, high) (or [0, low)), without modulo bias (rejection of the top remainder)."""
        if high is None:
            low, high = 0, low
        low, high = int(low), int(high)
        if high <= low:
            raise ValueError(f"high <= low ({high} <= {low})")
        span = high - low
        shape = _shape(size)
        n = int(np.prod(shape, dtype=np.int64))
        limit = np.uint64((2**64 // span) * span - 1) if span < 2**63 else None
        if limit is None:
            raise ValueError("integers() in secure mode takes ranges below 2**63")
        out = self.words(n)
        bad = np.flatnonzero(out > limit)
        while bad.size:
            out[bad] = self.words(bad.size)
            bad = bad[out[bad] > limit]
        vals = (out % np.uint64(span)).astype(np.int64) + low
        return vals.reshape(shape) if size is not None else int(vals[0])

    def permutation(self, x):
        """A random permutation of ``range(x)`` (or of the array ``x``): sorted by secure 64-bit keys.

        Two keys tie with probability below n²/2**65, the only departure from uniform."""
        arr = np.arange(int(x)) if np.ndim(x) == 0 else np.array(x)
        return arr[np.argsort(self.words(arr.shape[0]), kind="stable")]

    def choice(self, a, size=None, replace=True, p=None):
        """Like ``Generator.choice`` for an int or 1-d array ``a``."""
        pool = np.arange(int(a)) if np.ndim(a) == 0 else np.asarray(a)
        if not replace:
            k = 1 if size is None else int(np.prod(_shape(size)))
            picked = pool[self.permutation(pool.shape[0])[:k]]
            return picked.reshape(_shape(size)) if size is not None else picked[0]
        if p is None:
            idx = self.integers(0, pool.shape[0], size=size)
        else:
            cdf = np.cumsum(np.asarray(p, dtype=float))
            cdf /= cdf[-1]
            idx = np.minimum(np.searchsorted(cdf, self.random(_shape(size)), side="right"), pool.shape[0] - 1)
            idx = idx if size is not None else int(idx.reshape(-1)[0])
        return pool[idx]

    def _standard_normal(self, n: int, scale: float = 1.0):
        """Torch tensor of ``n`` normals N(0, scale²): the Box–Muller transform of secure uniforms."""
        import torch

        half = (n + 1) // 2
        u = self._unit(2 * half)  # one keystream for radii and angles
        r = torch.log(self._uniform_positive(half, u[:half])).mul_(-2.0 * scale * scale).sqrt_()
        theta = u[half:].mul_(2.0 * math.pi)
        out = torch.empty(2 * half, dtype=torch.float64)
        torch.mul(r, torch.cos(theta), out=out[:half])
        torch.mul(r, theta.sin_(), out=out[half:])
        return out[:n]

    def standard_normal(self, size=None):
        """Standard normal draws by the Box–Muller transform of two secure uniforms."""
        shape = _shape(size)
        z = self._standard_normal(int(np.prod(shape, dtype=np.int64))).numpy()
        return z.reshape(shape) if size is not None else float(z[0])

    def normal(self, loc=0.0, scale=1.0, size=None):
        if np.ndim(loc) or np.ndim(scale):
            return loc + scale * self.standard_normal(size)
        shape = _shape(size)
        z = self._standard_normal(int(np.prod(shape, dtype=np.int64))).mul_(float(scale)).add_(float(loc)).numpy()
        return z.reshape(shape) if size is not None else float(z[0])

    def _laplace(self, n: int, scale: float = 1.0):
        """Torch tensor of ``n`` Laplace(scale) draws: a secure sign times a secure exponential."""
        import torch

        u = self._uniform_positive(n)
        signs = torch.from_numpy((self.words(n) >> np.uint64(63)).view(np.int64)).to(torch.float64)
        return torch.log(u).mul_(signs.mul_(2.0).sub_(1.0).mul_(scale))

    def exponential(self, scale=1.0, size=None):
        import torch

        shape = _shape(size)
        e = torch.log(self._uniform_positive(int(np.prod(shape, dtype=np.int64)))).neg_().numpy()
        return scale * e.reshape(shape) if size is not None else float(scale * e[0])

    def laplace(self, loc=0.0, scale=1.0, size=None):
        shape = _shape(size)
        sign = np.where(self.words(int(np.prod(shape, dtype=np.int64))) >> np.uint64(63), -1.0, 1.0).reshape(shape)
        z = loc + sign * self.exponential(scale, shape)
        return z if size is not None else float(z)

    def gamma(self, shape, scale=1.0, size=None):
        """Gamma with a whole-number ``shape`` k: the sum of k secure exponentials."""
        k = int(shape)
        if k != shape or k < 1:
            raise ValueError(f"secure gamma draws take a whole-number shape >= 1, got {shape}")
        out = _shape(size)
        total = np.zeros(out)
        for _ in range(k):
            total += self.exponential(scale, out)
        return total if size is not None else float(total)


def _shape(size) -> tuple:
    if size is None:
        return (1,)
    return tuple(int(s) for s in np.atleast_1d(size)) if np.ndim(size) else (int(size),)


@contextlib.contextmanager
def secure_noise():
    """Inside this block every mechanism draws secure noise (:data:`SECURE`), whatever generator it is handed.

    Learners keep their seeded generator for the randomness that releases nothing (the train/test split,
    initial weights); every noise draw, Poisson batch and randomized-response coin comes from the operating
    system instead. ``run_learner(..., secure=True)`` runs a learner inside it.
    """
    token = _SECURE_NOISE.set(True)
    try:
        yield
    finally:
        _SECURE_NOISE.reset(token)


def secure_active() -> bool:
    """True inside :func:`secure_noise`."""
    return _SECURE_NOISE.get()


def wants_secure(rng) -> bool:
    """True if ``rng`` asks for secure noise (:data:`SECURE` or a :class:`SecureRandom`) or secure mode is on."""
    return isinstance(rng, SecureRandom) or (isinstance(rng, str) and rng == SECURE) or secure_active()


def bernoulli_threshold(p: float) -> float:
    """The threshold ``t`` for drawing an event of probability at most ``p`` as ``random() < t``: ``p`` rounded
    DOWN to a multiple of 2**-52. A uniform draw lies on a grid (multiples of 2**-53, of 2**-52 in secure mode), so
    ``random() < p`` happens with probability ``p`` rounded UP to that grid, up to 1.1e-16 more than ``p``: a record
    joined a Poisson batch a hair more often than the sampling rate its epsilon is accounted for (Mironov, Talwar &
    Zhang 2019), and below 2**-53 it joined at 2**-53 whatever ``p``. With ``t`` on both grids, the probability is
    ``t`` itself.

    >>> bernoulli_threshold(0.5), bernoulli_threshold(1.0), bernoulli_threshold(1e-17), bernoulli_threshold(0.1) <= 0.1
    (0.5, 1.0, 0.0, True)
    """
    return math.floor(float(p) * 2.0**52) / 2.0**52


def noise_generator(rng):
    """The generator privacy-relevant draws use: a :class:`SecureRandom` in secure mode, else ``as_generator(rng)``."""
    return SecureRandom() if wants_secure(rng) else as_generator(rng)


def secure_or_seed(seed: "int | None") -> tuple[bool, int]:
    """``(secure, seed)`` from a seed where ``None`` asks for secure noise (the pages' convention); the seed of what
    releases nothing (splits, initial weights) is then 0."""
    return (True, 0) if seed is None else (False, seed)


def noise_mode(secure: bool):
    """:func:`secure_noise` when ``secure``, else a block that changes nothing."""
    return secure_noise() if secure else contextlib.nullcontext()
