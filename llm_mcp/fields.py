"""A model field whose value is encrypted at rest and in every serialization.

``django-fernet-encrypted-fields`` encrypts a column on its way to the database, but its
fields serialize the decrypted value: ``manage.py dumpdata`` (and any
``django.core.serializers`` call) would write tokens and client secrets in clear.
`SealedTextField` serializes the Fernet ciphertext instead; ``loaddata`` reads it back (the
field decrypts on load with the same ``SECRET_KEY``/``SALT_KEY``, and encrypts again on
save), so a fixture or a backup never holds a secret in clear. Reading the plaintext stays an
explicit call (``Credential.data``).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models
from encrypted_fields.fields import EncryptedTextField

__all__ = ["SealedTextField"]


class SealedTextField(EncryptedTextField):
    """``EncryptedTextField`` whose serialized form (``value_to_string``) is the ciphertext.

    A dump made under one pair of keys loads under the same keys (or with them kept in
    ``SECRET_KEY_FALLBACKS`` / a ``SALT_KEY`` list); under other keys the value cannot be
    decrypted and ``Credential.data`` raises ``ValueError`` saying so, and ``loaddata`` refuses
    such a fixture (a ``ValidationError`` naming the keys) rather than store its ciphertext
    encrypted a second time.
    """

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        return super().to_python(value)  # lenient: Credential.data says what is wrong

    def to_python(self, value: Any) -> Any:
        text = super().to_python(value)
        if (isinstance(value, str) and text == value and not hasattr(self, "_already_decrypted")
                and _is_fernet_token(value)):
            raise ValidationError("this value cannot be decrypted with the current SECRET_KEY and SALT_KEY (it was "
                                  "encrypted under others); keep the old ones in SECRET_KEY_FALLBACKS / a SALT_KEY list")
        return text

    def value_to_string(self, obj: models.Model) -> Any:
        value = self.value_from_object(obj)
        if value is None or value == "":
            return value
        return self.get_prep_value(value)  # Fernet: a fresh ciphertext of the same text


def _is_fernet_token(text: str) -> bool:
    """Whether ``text`` has the shape of a Fernet token (version byte 0x80, base64url, 57+ bytes)."""
    if not text.startswith("gAAAAA"):
        return False
    try:
        raw = base64.urlsafe_b64decode(text.encode("ascii"))
    except (binascii.Error, ValueError, UnicodeEncodeError):
        return False
    return len(raw) >= 57 and raw[0] == 0x80
