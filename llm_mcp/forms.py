"""Forms of the chat pages: a tool call's arguments checked against its schema, and a server's
question as a Django form built from its fields.

    argument_problems({"a": "two"}, {"type": "object", "properties": {"a": {"type": "number"}}})
    # ["a: 'two' is not of type 'number'"]

    form = QuestionForm(question, data=request.POST)
    if form.is_valid():
        form.answer()             # question.answer(**values): saved on the tool call row
"""

from __future__ import annotations

from typing import Any

from django import forms
from jsonschema import exceptions as schema_exceptions
from jsonschema import validators

from .client.question import Field, Question

__all__ = ["QuestionForm", "argument_problems"]

MAX_PROBLEMS = 20


def argument_problems(arguments: Any, schema: Any) -> list[str]:
    """What is wrong with ``arguments`` against a tool's input ``schema`` (JSON Schema, the
    draft its ``$schema`` names, 2020-12 otherwise), each as ``"path: message"``; ``[]`` when
    they fit. A schema that is itself invalid is reported as one problem."""
    if not isinstance(schema, dict):
        return []
    validator_class = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        validator_class.check_schema(schema)
    except schema_exceptions.SchemaError as exc:
        return [f"the tool's input schema is invalid, so the arguments cannot be checked: {exc.message}"]
    problems = []
    for error in sorted(validator_class(schema).iter_errors(arguments), key=lambda e: list(e.absolute_path)):
        where = ".".join(str(part) for part in error.absolute_path) or "(arguments)"
        problems.append(f"{where}: {error.message[:300]}")
        if len(problems) >= MAX_PROBLEMS:
            break
    return problems


def _form_field(field: Field) -> forms.Field:
    options: dict[str, Any] = {"required": field.required and not field.has_default,
                               "label": field.title or field.name, "help_text": field.description or ""}
    if field.default is not None:
        options["initial"] = field.default
    if field.choices is not None:
        choices = [(str(choice), str(choice)) for choice in field.choices]
        if field.type == "array":
            return forms.MultipleChoiceField(choices=choices, widget=forms.CheckboxSelectMultiple, **options)
        # a blank first option unless the field has a default: nothing is chosen for the user
        return forms.ChoiceField(choices=([] if field.default is not None else [("", "---")]) + choices, **options)
    if field.type == "boolean":
        options["required"] = False  # an unchecked box is False
        return forms.BooleanField(**options)
    if field.type == "integer":
        return forms.IntegerField(**options)
    if field.type == "number":
        return forms.FloatField(**options)
    return forms.CharField(max_length=10_000, **options)


class QuestionForm(forms.Form):
    """A form for one of a server's questions (`llm_mcp.Question`): a field per
    ``Question.fields`` item (type, choices, default, required), prefixed by the question's key.

    ``is_valid()`` checks the form's types and then the question's own rules (``Field.check``:
    formats, ranges, lengths), so a wrong answer is refused on the server with the reason on the
    field; ``answer()`` then records it. A URL question has no fields."""

    def __init__(self, question: Question, *args: Any, **kwargs: Any):
        kwargs.setdefault("prefix", "q")
        super().__init__(*args, **kwargs)
        self.question = question
        self._by_name = {}
        for field in question.fields:
            self.fields[field.name] = _form_field(field)
            self._by_name[field.name] = field

    def _value(self, field: Field, value: Any) -> Any:
        if field.choices is not None:  # back to the choice's own value (numbers stay numbers)
            by_text = {str(choice): choice for choice in field.choices}
            if field.type == "array":
                return [by_text[item] for item in value]
            return by_text.get(value) if value != "" else None
        if field.type == "string" and value == "":
            return None
        return value

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        values = {}
        for name, field in self._by_name.items():
            if name not in cleaned:
                continue
            value = self._value(field, cleaned[name])
            if value is None:
                continue
            try:
                values[name] = field.check(value)
            except ValueError as exc:
                self.add_error(name, str(exc))
        if not self.errors:
            try:
                self.question.values_for(**values)
            except ValueError as exc:
                raise forms.ValidationError(str(exc)) from None
        self.values = values
        return cleaned

    def answer(self) -> None:
        """Record the validated answer on the question (``Question.answer``); call after
        ``is_valid()``. Raises ``ValueError`` when the question was answered meanwhile."""
        if self.question.is_url:
            self.question.answer()
        else:
            self.question.answer(**self.values)
